"""The AST analyses the loader runs on each upstream module griffe parses: the facts griffe's model does not keep."""
