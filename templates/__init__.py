"""Templates: facts -> prompts (template language, morphology backends, translation bootstrap)."""
