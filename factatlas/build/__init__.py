"""Build: curated facts + rendered prompts -> multi-parallel benchmark (splits, candidates, stats)."""
