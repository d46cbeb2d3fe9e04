"""The protocol on the wire: generated protobuf code (``arena.wire.v1``) and conversions between it and
the engine's values (:mod:`arena.wire.serde`). Protobuf objects stop here: they never enter the engine,
the referee's logic, the ratings or the ledger.

It may use the rules engine and :mod:`arena.common` only.
"""
