"""The grounding contract: drafts, quotable units, the verifier, the support check and the answer record.

Everything a citation must pass before it is shown, and the typed record of what was shown. It imports
nothing else of `answer/` but its errors: the gate, the models, the logs and the composition build on it.
"""
