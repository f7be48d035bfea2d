# The compiled core (_core.py) makes Channel an extension type with typed fields; the pure
# model ignores this file. Keep the fields in step with Channel.__slots__.
cdef class Channel:
    cdef public object name, kind, depth, numeric, reader, writer, work
    cdef public list toks, wts, rts
    cdef public Py_ssize_t h, max_occ, _keep, _compact_at, _occ_done
    cdef public Py_ssize_t vis, acct, prev_r, full_cycles, empty_cycles
    cdef public bint reader_waiting, writer_waiting, traced, stats
