"""The app layer: the `factatlas` command (``cli``) and the quickstart (``pipeline``).

It wires the stage rooms together; the contract in ``factatlas/`` (records, tables, the benchmark
reader, invariants) imports none of them, and no stage imports the app.
"""
