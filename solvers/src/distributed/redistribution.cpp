#include "distributed/redistribution.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "base/kernel_table.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers {

namespace {

// The local positions past the last one the runs hold.
std::int64_t extent_of(const std::vector<PointRun>& runs) {
    std::int64_t extent = 0;
    for (const PointRun& run : runs) extent = std::max(extent, run.local + run.count);
    return extent;
}

// The points two layouts' runs share, in the whole's order: where each lies in `a` and in `b`.
struct Shared {
    std::int64_t a = 0, b = 0, count = 0;
};
std::vector<Shared> shared_points(std::vector<PointRun> a, std::vector<PointRun> b) {
    const auto by_global = [](const PointRun& x, const PointRun& y) { return x.global < y.global; };
    std::sort(a.begin(), a.end(), by_global);
    std::sort(b.begin(), b.end(), by_global);
    std::vector<Shared> shared;
    for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
        const std::int64_t a_end = a[i].global + a[i].count, b_end = b[j].global + b[j].count;
        const std::int64_t first = std::max(a[i].global, b[j].global);
        const std::int64_t end = std::min(a_end, b_end);
        if (first < end) {
            shared.push_back(
                {a[i].local + first - a[i].global, b[j].local + first - b[j].global, end - first});
        }
        if (a_end <= b_end) {
            ++i;
        } else {
            ++j;
        }
    }
    return shared;
}

template <typename V>
void copy_runs(std::span<const V> from, const std::vector<IndexRun>& sent, std::span<V> into,
               const std::vector<IndexRun>& received) {
    if (sent.size() == 1 && received.size() == 1) {
        const auto source = from.subspan(static_cast<std::size_t>(sent[0].first),
                                         static_cast<std::size_t>(sent[0].count));
        std::copy(source.begin(), source.end(),
                  into.begin() + static_cast<std::ptrdiff_t>(received[0].first));
        return;
    }
    const std::vector<std::int64_t> in = run_indices(sent), out = run_indices(received);
    for (std::size_t i = 0; i < in.size() && i < out.size(); ++i) {
        into[static_cast<std::size_t>(out[i])] = from[static_cast<std::size_t>(in[i])];
    }
}

}  // namespace

VectorLayout whole_on_every_rank(std::int64_t points, int ranks) {
    const std::vector<PointRun> whole =
        points > 0 ? std::vector<PointRun>{{0, 0, points}} : std::vector<PointRun>{};
    return VectorLayout(static_cast<std::size_t>(ranks), whole);
}

std::vector<PointRun> part_runs(const GridBox& box, const Box& part, const Box& layout) {
    std::vector<PointRun> runs;
    if (part.empty()) return runs;
    for (std::int64_t k = part.lower[2]; k < part.upper[2]; ++k) {
        for (std::int64_t j = part.lower[1]; j < part.upper[1]; ++j) {
            const PointRun row{box.row(part.lower[0], j, k), layout.index(part.lower[0], j, k),
                               part.points(0)};
            // A row that goes on from the last in both numberings lengthens it (whole planes of
            // both: one run).
            if (!runs.empty() && runs.back().global + runs.back().count == row.global &&
                runs.back().local + runs.back().count == row.local) {
                runs.back().count += row.count;
            } else {
                runs.push_back(row);
            }
        }
    }
    return runs;
}

HaloPlan redistribution_plan(int rank, const VectorLayout& source, const VectorLayout& target) {
    HaloPlan plan;
    const auto me = static_cast<std::size_t>(rank);
    for (std::size_t q = 0; q < source.size(); ++q) {
        HaloPlan::Neighbour n{static_cast<int>(q), {}, {}};
        for (const Shared& s : shared_points(source[me], target[q])) add_run(n.sent, s.a, s.count);
        for (const Shared& s : shared_points(source[q], target[me])) {
            add_run(n.received, s.b, s.count);
        }
        if (!n.sent.empty() || !n.received.empty()) plan.neighbours.push_back(std::move(n));
    }
    return plan;
}

template <typename V>
void redistribute_on_host(const Communicator& ranks, const HaloPlan& plan, std::span<const V> from,
                          std::span<V> into) {
    std::vector<Message> sends, receives;
    // Pieces of several runs travel packed: sent from and received into host buffers.
    std::vector<std::vector<V>> packed, unpacked;
    std::vector<const HaloPlan::Neighbour*> to_unpack;
    std::int64_t arriving = 0;
    const auto bytes = [](auto values) { return std::as_writable_bytes(values); };
    for (const HaloPlan::Neighbour& n : plan.neighbours) {
        arriving += run_points(n.received);
        if (n.rank == ranks.rank()) {
            copy_runs(from, n.sent, into, n.received);
            continue;
        }
        if (n.sent.size() == 1) {
            const auto piece = from.subspan(static_cast<std::size_t>(n.sent[0].first),
                                            static_cast<std::size_t>(n.sent[0].count));
            sends.push_back(
                {n.rank, bytes(std::span<V>(const_cast<V*>(piece.data()), piece.size()))});
        } else if (!n.sent.empty()) {
            std::vector<V>& piece = packed.emplace_back();
            for (const std::int64_t i : run_indices(n.sent)) {
                piece.push_back(from[static_cast<std::size_t>(i)]);
            }
            sends.push_back({n.rank, bytes(std::span<V>(piece))});
        }
        if (n.received.size() == 1) {
            receives.push_back(
                {n.rank, bytes(into.subspan(static_cast<std::size_t>(n.received[0].first),
                                            static_cast<std::size_t>(n.received[0].count)))});
        } else if (!n.received.empty()) {
            std::vector<V>& piece =
                unpacked.emplace_back(static_cast<std::size_t>(run_points(n.received)));
            to_unpack.push_back(&n);
            receives.push_back({n.rank, bytes(std::span<V>(piece))});
        }
    }
    if (arriving != static_cast<std::int64_t>(into.size())) {
        throw std::logic_error("redistribution: rank " + std::to_string(ranks.rank()) + " wants " +
                               std::to_string(into.size()) + " values, of which the ranks hold " +
                               std::to_string(arriving));
    }
    if (!sends.empty() || !receives.empty()) ranks.start_exchange(sends, receives)->finish();
    for (std::size_t p = 0; p < unpacked.size(); ++p) {
        const std::vector<std::int64_t> out = run_indices(to_unpack[p]->received);
        for (std::size_t i = 0; i < out.size(); ++i) {
            into[static_cast<std::size_t>(out[i])] = unpacked[p][i];
        }
    }
}

template <typename T>
Redistribution<T>::Redistribution(std::shared_ptr<const Backend> backend)
    : backend_(std::move(backend)) {}

template <typename T>
std::unique_ptr<Redistribution<T>> Redistribution<T>::gather_on_every_rank(
    std::shared_ptr<const Backend> backend, const VectorLayout& source) {
    std::unique_ptr<Redistribution> made(new Redistribution(std::move(backend)));
    made->kind_ = Kind::gathered;
    made->make_gathered(source);
    return made;
}

template <typename T>
std::unique_ptr<Redistribution<T>> Redistribution<T>::point_to_point(
    std::shared_ptr<const Backend> backend, const VectorLayout& source,
    const VectorLayout& target) {
    std::int64_t whole = 0;
    for (const auto& runs : source) whole += run_points(runs);
    const bool all_whole = std::all_of(target.begin(), target.end(), [&](const auto& runs) {
        return runs.size() == 1 && runs[0].global == 0 && runs[0].local == 0 &&
               runs[0].count == whole;
    });
    if (all_whole) {
        throw std::logic_error(
            "redistribution: every target is the whole vector (a collective gather: "
            "gather_on_every_rank)");
    }
    std::unique_ptr<Redistribution> made(new Redistribution(std::move(backend)));
    made->make_point_to_point(source, target);
    return made;
}

template <typename T>
void Redistribution<T>::make_point_to_point(const VectorLayout& source,
                                            const VectorLayout& target) {
    const auto rank = static_cast<std::size_t>(backend_->communicator().rank());
    held_ = extent_of(source[rank]);
    wanted_ = extent_of(target[rank]);
    bool covered = true;
    for (std::size_t q = 0; q < target.size() && covered; ++q) {
        std::int64_t own = 0;
        for (const Shared& s : shared_points(source[q], target[q])) own += s.count;
        covered = own == run_points(target[q]);
    }
    if (!covered) {
        // A target of one run is received at its place; one of several (a part inside its
        // window) packed, then scattered.
        VectorLayout packed = target, from = source;
        if (from[rank].size() == 1) {  // (a source of one run is sent from its place)
            from_offset_ = from[rank][0].local;
            from[rank][0].local = 0;
            held_ = from[rank][0].count;
        }
        if (packed[rank].size() == 1) {
            into_offset_ = packed[rank][0].local;
            packed[rank][0].local = 0;
            wanted_ = packed[rank][0].count;
        } else if (run_points(target[rank]) != wanted_) {
            std::vector<std::int64_t> places;
            for (PointRun& run : packed[rank]) {
                const std::int64_t at = static_cast<std::int64_t>(places.size());
                for (std::int64_t t = 0; t < run.count; ++t) places.push_back(run.local + t);
                run.local = at;
            }
            wanted_ = static_cast<std::int64_t>(places.size());
            scatter_index_ = Array<std::int64_t>::from_host(backend_, places);
            scattered_ = Array<T>(backend_, places.size());
        }
        plan_ = redistribution_plan(static_cast<int>(rank), from, packed);
        sent_.resize(static_cast<std::size_t>(held_));
        received_.resize(static_cast<std::size_t>(wanted_));
        return;
    }
    kind_ = Kind::local;
    std::vector<std::int64_t> index(static_cast<std::size_t>(wanted_), -1);
    for (const Shared& s : shared_points(source[rank], target[rank])) {
        for (std::int64_t t = 0; t < s.count; ++t)
            index[static_cast<std::size_t>(s.b + t)] = s.a + t;
    }
    if (std::find(index.begin(), index.end(), -1) != index.end()) {
        throw std::logic_error("redistribution: rank " + std::to_string(rank) +
                               "'s target has positions no point fills");
    }
    index_ = Array<std::int64_t>::from_host(backend_, index);
}

template <typename T>
Redistribution<T>::~Redistribution() = default;

template <typename T>
void Redistribution<T>::make_gathered(const VectorLayout& source) {
    const Communicator& ranks = backend_->communicator();
    const int rank = ranks.rank(), count = ranks.size();
    starts_ = {0};
    for (const auto& runs : source) starts_.push_back(starts_.back() + run_points(runs));
    for (std::size_t q = 0; q + 1 < starts_.size(); ++q) {
        slot_ = std::max(slot_, starts_[q + 1] - starts_[q]);
    }
    const std::vector<PointRun>& own = source[static_cast<std::size_t>(rank)];
    own_local_ = own.empty() ? 0 : own.front().local;
    // The segments in the whole's order where each run starts where those before it end.
    bool ordered = true;
    std::int64_t at = 0;
    for (const auto& runs : source) {
        for (const PointRun& run : runs) {
            ordered = ordered && run.global == at;
            at += run.count;
        }
    }
    // Every rank learns whether another's memory ran out (entered on every rank: whether this
    // rank's source packs is its own to know).
    all_or_none(ranks, [&] {
        if (own.size() > 1) {
            std::vector<std::int64_t> locals;
            for (const PointRun& run : own) {
                for (std::int64_t t = 0; t < run.count; ++t) locals.push_back(run.local + t);
            }
            pack_index_ = Array<std::int64_t>::from_host(backend_, locals);
        }
        if (ordered) return;
        std::vector<std::int64_t> places(static_cast<std::size_t>(at));
        std::int64_t place = 0;
        for (const auto& runs : source) {
            for (const PointRun& run : runs) {
                for (std::int64_t t = 0; t < run.count; ++t) {
                    places[static_cast<std::size_t>(run.global + t)] = place++;
                }
            }
        }
        unpack_index_ = Array<std::int64_t>::from_host(backend_, places);
        segments_ = Array<T>(backend_, static_cast<std::size_t>(at));
    });
    // The rank before and after, a slot each way (sides of no bytes take no part).
    const auto bytes = static_cast<std::size_t>(slot_) * sizeof(T);
    std::vector<HaloSide> sides;
    if (rank > 0 && bytes > 0) {
        before_ = static_cast<int>(sides.size());
        sides.push_back({rank - 1, bytes, bytes, sizeof(T)});
    }
    if (rank + 1 < count && bytes > 0) {
        after_ = static_cast<int>(sides.size());
        sides.push_back({rank + 1, bytes, bytes, sizeof(T)});
    }
    device_ = backend_->open_device_halo(sides);
    if (device_) {
        slots_ = Array<T>(backend_, static_cast<std::size_t>(slot_ * count));
        // Zero once: a slot's points beyond a shorter segment travel too.
        if (slots_.size() > 0) fill(slots_, T(0));
    }
}

template <typename T>
void Redistribution<T>::pack(const T* from, T* at) {
    const auto rank = static_cast<std::size_t>(backend_->communicator().rank());
    const auto own = static_cast<std::size_t>(starts_[rank + 1] - starts_[rank]);
    if (own == 0) return;
    // Traffic: an index and a value read, a value written per point (a copy where one run).
    if (pack_index_.size() > 0) {
        backend_->kernels<T>().gather(*backend_, own, pack_index_.data(), from, at);
    } else if (from + own_local_ != at) {
        backend_->copy(at, from + own_local_, own * sizeof(T));
    }
}

template <typename T>
void Redistribution<T>::gather_along_line(T* packed) {
    const int rank = backend_->communicator().rank();
    const int count = backend_->communicator().size();
    const auto part = [&](int q) { return static_cast<std::size_t>(starts_[q + 1] - starts_[q]); };
    const auto slot = [&](int q) { return slots_.data() + static_cast<std::size_t>(slot_) * q; };
    if (part(rank) > 0) {
        backend_->copy(slot(rank), packed + starts_[rank], part(rank) * sizeof(T));
    }
    // The exchanges are counted as one gather, not as halo exchanges (their waits on the GPU
    // stay with the halo's).
    CommunicationTimes& times = backend_->communicator().times();
    const CommunicationCost halo = times.halo;
    std::array<const void*, 2> to{};
    std::array<void*, 2> into{};
    const auto sides = static_cast<std::size_t>(std::max(before_, after_) + 1);
    for (int s = 1; s < count; ++s) {
        // To the rank after, the segment that came from before (this rank's own at first); to
        // the rank before, the one from after; a side with none to pass sends its own slot,
        // unread. Traffic: a slot each way.
        const int to_after = rank - s + 1, to_before = rank + s - 1;
        const int from_before = rank - s, from_after = rank + s;
        if (before_ >= 0) {
            to[static_cast<std::size_t>(before_)] = slot(to_before < count ? to_before : rank);
            into[static_cast<std::size_t>(before_)] =
                from_before >= 0 ? slot(from_before) : nullptr;
        }
        if (after_ >= 0) {
            to[static_cast<std::size_t>(after_)] = slot(to_after >= 0 ? to_after : rank);
            into[static_cast<std::size_t>(after_)] =
                from_after < count ? slot(from_after) : nullptr;
        }
        device_->exchange_sides(std::span(to.data(), sides), std::span(into.data(), sides));
    }
    const CommunicationCost exchanges = times.halo - halo;
    times.halo = halo;
    times.gathers += {1, exchanges.seconds, exchanges.bytes_sent};
    for (int q = 0; q < count; ++q) {
        if (q != rank && part(q) > 0) {
            backend_->copy(packed + starts_[q], slot(q), part(q) * sizeof(T));
        }
    }
}

template <typename T>
void Redistribution<T>::gather_through_host(T* packed) {
    const Communicator& ranks = backend_->communicator();
    const auto rank = static_cast<std::size_t>(ranks.rank());
    const auto first = static_cast<std::size_t>(starts_[rank]);
    const auto count = static_cast<std::size_t>(starts_[rank + 1] - starts_[rank]);
    // Traffic: the own segment to the host, the all-gather, the whole back.
    std::vector<T> own(count);
    if (count > 0) backend_->copy_to_host(own.data(), packed + first, count * sizeof(T));
    const auto all = ranks.all_gather(std::as_bytes(std::span<const T>(own)));
    std::vector<T> values(static_cast<std::size_t>(starts_.back()));
    for (std::size_t r = 0; r < all.size(); ++r) {
        const auto expected = static_cast<std::size_t>(starts_[r + 1] - starts_[r]) * sizeof(T);
        if (all[r].size() != expected) {
            throw std::logic_error("multigrid: rank " + std::to_string(r) + " sent " +
                                   std::to_string(all[r].size()) + " bytes of a gathered level, " +
                                   std::to_string(expected) + " expected");
        }
        if (expected > 0) std::memcpy(values.data() + starts_[r], all[r].data(), expected);
    }
    if (!values.empty()) {
        backend_->copy_from_host(packed, values.data(), values.size() * sizeof(T));
    }
}

template <typename T>
void Redistribution<T>::run_through_host(const T* from, T* into) {
    if (held_ == 0 && wanted_ == 0) return;
    const Communicator& ranks = backend_->communicator();
    // Traffic: this rank's source to the host, the messages, its target back.
    const std::size_t sending = static_cast<std::size_t>(held_) * sizeof(T);
    if (held_ > 0) backend_->copy_to_host(sent_.data(), from + from_offset_, sending);
    const CommunicationTimer timer(ranks.times().gathers, static_cast<double>(sending));
    redistribute_on_host<T>(ranks, plan_, sent_, received_);
    if (wanted_ == 0) return;
    const std::size_t bytes = static_cast<std::size_t>(wanted_) * sizeof(T);
    if (scatter_index_.size() == 0) {
        backend_->copy_from_host(into + into_offset_, received_.data(), bytes);
        return;
    }
    backend_->copy_from_host(scattered_.data(), received_.data(), bytes);
    backend_->kernels<T>().scatter(*backend_, scattered_.size(), scatter_index_.data(),
                                   scattered_.data(), into);
}

template <typename T>
void Redistribution<T>::run(const T* from, T* into) {
    switch (kind_) {
        case Kind::gathered: {
            T* packed = unpack_index_.size() > 0 ? segments_.data() : into;
            const auto rank = static_cast<std::size_t>(backend_->communicator().rank());
            pack(from, packed + starts_[rank]);
            if (device_) {
                gather_along_line(packed);
            } else {
                gather_through_host(packed);
            }
            // Traffic: an index and a value read, a value written per point of the whole.
            if (unpack_index_.size() > 0) {
                backend_->kernels<T>().gather(*backend_, unpack_index_.size(), unpack_index_.data(),
                                              segments_.data(), into);
            }
            return;
        }
        case Kind::local:
            // Traffic: an index and a value read, a value written per point of the target.
            if (wanted_ > 0) {
                backend_->kernels<T>().gather(*backend_, static_cast<std::size_t>(wanted_),
                                              index_.data(), from, into);
            }
            return;
        case Kind::through_host:
            run_through_host(from, into);
            return;
    }
}

template class Redistribution<float>;
template class Redistribution<double>;

template void redistribute_on_host(const Communicator&, const HaloPlan&, std::span<const double>,
                                   std::span<double>);
template void redistribute_on_host(const Communicator&, const HaloPlan&, std::span<const float>,
                                   std::span<float>);

}  // namespace simrun::solvers
