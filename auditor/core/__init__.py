"""Core: the types every stage shares, and nothing that reads a file or the network.

References and use sites (the downstream's IR: refs, sites, notebook_map), signatures and call shapes
with CPython's binding of one to the other (signature, bind), why something is not checkable (reasons),
rule codes (codes), findings and the audit's result (results), the wording of messages (wording) and
the tool's version (version). Every other package imports from here; this package imports from none.
"""
