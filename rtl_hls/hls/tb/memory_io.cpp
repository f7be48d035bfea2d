// ---- I/O of a top with off-chip memory: uint32_t arrays behind m_axi ports, counts as
// scalar outputs (rtl_hls/hls/_maxi.py inserts these; cosim/backends/_hls.py reads the files).
static std::vector<uint32_t> read_u32(const std::string& dir, const char* name) {
    std::vector<samfuse::word_t> w = read_words(dir, name);
    std::vector<uint32_t> v(w.size());
    for (size_t i = 0; i < w.size(); i++) v[i] = w[i].to_uint();
    return v;
}

static void write_u32_line(FILE* f, const std::vector<uint32_t>& words, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) std::fprintf(f, "%u ", words[i]);
    std::fprintf(f, "\n");
}

// a value writer: "nvals", the value words
static void write_u32(const std::string& dir, int k, const std::vector<uint32_t>& vals,
                      uint32_t n) {
    FILE* f = open_out(dir, "writer" + std::to_string(k) + ".txt");
    std::fprintf(f, "%u\n", n);
    write_u32_line(f, vals, n);
    std::fclose(f);
}

// a compressed level: "ncrd nseg", the crds, the seg words (crds so far at each stop; the
// stop levels are not stored, decoding does not need them)
static void write_crd_seg(const std::string& dir, int k, const std::vector<uint32_t>& crd,
                          const std::vector<uint32_t>& seg, uint32_t n, uint32_t ns) {
    FILE* f = open_out(dir, "writer" + std::to_string(k) + ".txt");
    std::fprintf(f, "%u %u\n", n, ns);
    write_u32_line(f, crd, n);
    write_u32_line(f, seg, ns);
    std::fclose(f);
}

// a dense level stores nothing: "ncrd nseg" (its fibers are full, checked by the writer)
static void write_counts(const std::string& dir, int k, uint32_t n, uint32_t ns) {
    FILE* f = open_out(dir, "writer" + std::to_string(k) + ".txt");
    std::fprintf(f, "%u %u\n", n, ns);
    std::fclose(f);
}

