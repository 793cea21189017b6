"""Importers of published benchmarks (DLAMA-v1, BMLAMA, mLAMA) into the factatlas benchmark format."""
