"""One module per method family; each ends with a single ``register(...)`` call.

Modules are discovered by :func:`taskfactory.registry.families`; a module whose
name starts with ``_`` holds shared helpers and registers nothing.
"""
