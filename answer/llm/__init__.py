"""Chat models behind the answer: the litellm client, prompts and reply shapes, provider-native citations, the
optional support judge, and `LLM_MODEL=local` (weights from registry packages, the llama.cpp child server).

Nothing here decides what is shown: a model proposes, and the verifier (verify.py, support.py) and the gate
decide.
"""
