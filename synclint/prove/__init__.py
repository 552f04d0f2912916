"""The GPU proof harness: `synclint prove` runs each rule's executable proof case
(`fixtures/<CODE>/proof.py`) and the fixer's version of it on a CUDA device, measures
whether each stalls, and checks that both give the same results."""
