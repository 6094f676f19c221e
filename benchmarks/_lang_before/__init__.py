"""The English-only steering, evidence and instruction checks as they were before issue 27
item 3 (languages), kept verbatim but for their imports so that
`benchmarks/languages.py` measures before and after side by side in one run."""
