"""Iterating an operator's input chunk: plain records, or (key, record) pairs with the
backend's current key set while each record is processed."""


def unkeyed_records(chunk):
    return chunk


def keyed_records(backend):
    set_current_key = backend.set_current_key

    def records(pairs):
        for key, record in pairs:
            set_current_key(key)
            yield record
    return records
