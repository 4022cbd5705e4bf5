"""What the programs that run the output expect of it: the engines (vLLM, SGLang) and the endpoint picker.

Below validation and plan, which both ask it: a fact (the port an engine binds when no flag says,
the flags the picker is given) is stated once, here, with where it comes from.
"""
