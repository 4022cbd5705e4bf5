"""What the programs that run the output expect of it: the engines (vLLM, SGLang) and the endpoint picker.

Below validation and plan, which both ask it: a fact (the port an engine binds when no flag says,
the flags the picker is given) is stated once, here, with where it comes from. Which engine each
member runs, and what it is told, is resolved once per member by `registry`, from the ordered
list of engines there; validation and plan read that record and never name an engine.
"""
