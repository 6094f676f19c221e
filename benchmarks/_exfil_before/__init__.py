"""The exfiltration filter as it was before decoded views (issue 24), kept verbatim so that
`benchmarks/proxy.py` measures before and after side by side in one run."""
