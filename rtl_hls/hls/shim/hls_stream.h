// samfuse csim shim: a minimal, portable stand-in for Xilinx's hls_stream.h.
//
// Written for samfuse (not derived from Xilinx sources). hls::stream<T> is an unbounded
// FIFO (a std::deque) with a name, read/write/empty/full/size and the non-blocking
// read_nb/write_nb. C-simulation runs the dataflow processes one after another in
// topological order, so a stream must hold a whole run's tokens: it never reports full.
// Reading an empty stream would hang real hardware; here it aborts with the stream's name,
// which is what a malformed graph (or a template bug) looks like in csim.
#ifndef SAMFUSE_SHIM_HLS_STREAM_H
#define SAMFUSE_SHIM_HLS_STREAM_H

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>

namespace hls {

template <typename T>
class stream {
  public:
    stream() : name_("stream") {}
    explicit stream(const char* name) : name_(name) {}
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;

    void write(const T& v) { q_.push_back(v); }
    void operator<<(const T& v) { write(v); }

    T read() {
        if (q_.empty()) {
            std::fprintf(stderr, "samfuse csim: read from empty stream '%s'\n", name_.c_str());
            std::abort();
        }
        T v = q_.front();
        q_.pop_front();
        return v;
    }
    void read(T& v) { v = read(); }
    void operator>>(T& v) { v = read(); }

    bool read_nb(T& v) {
        if (q_.empty()) return false;
        v = read();
        return true;
    }
    bool write_nb(const T& v) {
        write(v);
        return true;
    }

    bool empty() const { return q_.empty(); }
    bool full() const { return false; }
    std::size_t size() const { return q_.size(); }
    const char* name() const { return name_.c_str(); }

  private:
    std::string name_;
    std::deque<T> q_;
};

}  // namespace hls

#endif  // SAMFUSE_SHIM_HLS_STREAM_H
