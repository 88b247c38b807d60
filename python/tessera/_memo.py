"""One value derived from some tensors, kept while those tensors are unchanged: the memo behind
Graph.transposed_values, GraphCache and the folded TransformerConv's query operators."""
from typing import Callable, Optional, Sequence


def tensor_signature(tensors: Sequence) -> Optional[tuple]:
    """Each tensor's version counter and storage address (None for None): what a memo holding the
    tensors themselves compares besides their identity (an in-place op bumps the version;
    Module.to() and `t.data = u` keep the object and its version but swap the storage). None when
    one is an inference-mode tensor, which has no version counter: such inputs are never kept."""
    try:
        return tuple(None if t is None else (t._version, t.data_ptr()) for t in tensors)
    except RuntimeError:
        return None


class TensorMemo:
    """make()'s value, kept while every tensor passed to get() is the same object at the same
    tensor_signature, and `extra` (anything else the value depends on) compares equal. It holds the
    tensors and detached aliases of them, so no storage it compared can be freed and a new one take
    its address. A write through `.data` bypasses the version counter, as it bypasses autograd."""
    __slots__ = ("_tensors", "_aliases", "_key", "_value")

    def __init__(self):
        self.clear()

    def get(self, tensors: Sequence, make: Callable, extra=()):
        tensors = tuple(tensors)
        key = (tensor_signature(tensors), extra)
        if (key[0] is not None and self._key == key and len(self._tensors) == len(tensors)
                and all(a is b for a, b in zip(self._tensors, tensors))):
            return self._value
        value = make()
        if key[0] is None:
            self.clear()
        else:
            self._tensors, self._key, self._value = tensors, key, value
            self._aliases = tuple(None if t is None else t.detach() for t in tensors)
        return value

    def clear(self):
        self._tensors = self._aliases = self._key = self._value = None
