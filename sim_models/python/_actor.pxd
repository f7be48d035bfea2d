# The compiled core (_core.py) makes Actor an extension type with typed fields (its
# subclasses keep their own attributes in a __dict__); the pure model ignores this file.
cdef class Actor:
    cdef public object id, node, blocked, inputs, outputs, dtype
    cdef public Py_ssize_t t, fires, stall_in, stall_out, stall_mem, done_cycle, cycles
    cdef public Py_ssize_t interval
    cdef public bint finished, queued
