#include "simrun/solvers/matrices/dia_matrix.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "base/kernel_table.hpp"
#include "matrices/value_classes.hpp"

namespace simrun::solvers {
namespace {

template <typename T>
struct Stencil {
    std::vector<T> constants;         // per diagonal
    std::vector<std::uint8_t> masks;  // per row: bit d set when the row has diagonal d
};

// Whether row i of `a` is an identity row: its one entry is a 1 on the main diagonal.
template <typename T>
bool identity_row(const DiaData<T>& a, int main, std::int64_t i) {
    if (a.at(main, i) != T(1)) return false;
    for (int d = 0; d < a.num_diagonals(); ++d) {
        const std::int64_t j = i + a.offsets[static_cast<std::size_t>(d)];
        if (d != main && j >= 0 && j < a.n && a.at(d, i) != T(0)) return false;
    }
    return true;
}

// The stencil of a DIA matrix with constant coefficients (see dia_matrix.hpp; identity rows
// aside, flagged by stencil_unit_row); throws std::invalid_argument saying why the matrix has
// none.
template <typename T>
Stencil<T> constant_coefficients(const DiaData<T>& a) {
    const int diagonals = a.num_diagonals();
    const int main = a.find_diagonal(0);
    const auto refuse = [](const std::string& why) {
        return std::invalid_argument("stencil storage needs constant coefficients: " + why);
    };
    if (diagonals > max_stencil_diagonals) {
        throw refuse(std::to_string(diagonals) + " diagonals (at most " +
                     std::to_string(max_stencil_diagonals) + ")");
    }
    if (main < 0) throw refuse("no main diagonal");
    Stencil<T> stencil{std::vector<T>(static_cast<std::size_t>(diagonals), T(0)),
                       std::vector<std::uint8_t>(static_cast<std::size_t>(a.n), 0)};
    // Each diagonal's constant: its first value, in row order, of a row that is no identity row
    // (identity rows hold their 1 apart from the main diagonal's constant) and whose column is
    // in the matrix, that is not zero.
    const auto counts = [&](int d, std::int64_t i) {
        const std::int64_t j = i + a.offsets[static_cast<std::size_t>(d)];
        return j >= 0 && j < a.n;
    };
    for (int d = 0; d < diagonals; ++d) {
        for (std::int64_t i = 0; i < a.n; ++i) {
            if (!counts(d, i) || a.at(d, i) == T(0) || identity_row(a, main, i)) continue;
            stencil.constants[static_cast<std::size_t>(d)] = a.at(d, i);
            break;
        }
    }
    // An identity row's mask: the main diagonal, and a flag where its 1 is not the main
    // diagonal's constant (a main diagonal of identity rows alone takes 1).
    const T main_constant = stencil.constants[static_cast<std::size_t>(main)] == T(0)
                                ? T(1)
                                : stencil.constants[static_cast<std::size_t>(main)];
    const unsigned flag = main_constant == T(1) ? 0u : stencil_unit_row;
    const auto unit_mask = static_cast<std::uint8_t>((1u << main) | flag);
    // Every row's mask in one pass on every core, and per diagonal the first row that breaks the
    // stencil (another value, NaN among them, or a zero on the main diagonal).
    std::int64_t first_bad[max_stencil_diagonals];
    std::fill(std::begin(first_bad), std::end(first_bad), a.n);
    bool any_identity = false;
#pragma omp parallel for schedule(static) reduction(min                                  \
                                                    : first_bad[:max_stencil_diagonals]) \
    reduction(||                                                                         \
              : any_identity)
    for (std::int64_t i = 0; i < a.n; ++i) {
        if (identity_row(a, main, i)) {
            stencil.masks[static_cast<std::size_t>(i)] = unit_mask;
            any_identity = true;
            continue;
        }
        std::uint8_t mask = 0;
        for (int d = 0; d < diagonals; ++d) {
            if (!counts(d, i)) continue;
            const T value = a.at(d, i);
            if (value == T(0) ? d == main
                              : value != stencil.constants[static_cast<std::size_t>(d)]) {
                first_bad[d] = std::min(first_bad[d], i);
            } else if (value != T(0)) {
                mask |= static_cast<std::uint8_t>(1u << d);
            }
        }
        stencil.masks[static_cast<std::size_t>(i)] = mask;
    }
    // The first break in diagonal order, then row order (as a scan diagonal by diagonal meets it).
    for (int d = 0; d < diagonals; ++d) {
        const std::int64_t i = first_bad[d];
        if (i == a.n) continue;
        const std::string at =
            " at row " + std::to_string(i) + ", offset " + std::to_string(a.offsets[d]);
        throw refuse((a.at(d, i) == T(0) ? "a zero diagonal entry" : "another value") + at);
    }
    if (!any_identity) return stencil;
    stencil.constants[static_cast<std::size_t>(main)] = main_constant;
    if (flag != 0 && diagonals >= 8) {
        throw refuse("identity rows beside a main diagonal of " +
                     std::to_string(static_cast<double>(main_constant)) +
                     " need a spare mask bit, which 8 diagonals leave none of");
    }
    return stencil;
}

// Throws std::invalid_argument where the offsets are more than max_dia_diagonals, not sorted
// and distinct, or outside a matrix of n rows.
void check_offsets(const std::vector<int>& offsets, std::int64_t n) {
    if (offsets.size() > max_dia_diagonals) {
        throw std::invalid_argument("DIA matrix: " + std::to_string(offsets.size()) +
                                    " diagonals, at most " + std::to_string(max_dia_diagonals));
    }
    for (std::size_t d = 0; d < offsets.size(); ++d) {
        if (d > 0 && offsets[d] <= offsets[d - 1]) {
            throw std::invalid_argument("DIA matrix: offsets must be sorted and distinct");
        }
        if (n > 0 && (offsets[d] <= -n || offsets[d] >= n)) {
            throw std::invalid_argument("DIA matrix: offset " + std::to_string(offsets[d]) +
                                        " is outside the matrix of " + std::to_string(n) + " rows");
        }
    }
}

}  // namespace

template <typename T>
DiaMatrix<T>::DiaMatrix(std::shared_ptr<const Backend> backend, std::int64_t n,
                        std::vector<int> offsets, Array<std::uint8_t> row_classes,
                        const std::vector<T>& class_values)
    : StoredMatrix<T>(std::move(backend), n),
      host_offsets_(std::move(offsets)),
      storage_(DiaStorage::classes) {
    if (n < 0) throw std::invalid_argument("DIA matrix: negative size");
    check_offsets(host_offsets_, n);
    const std::size_t diagonals = host_offsets_.size();
    if (row_classes.size() != static_cast<std::size_t>(n) || diagonals == 0 ||
        class_values.size() % diagonals != 0 || (n > 0 && class_values.empty()) ||
        class_values.size() / diagonals > static_cast<std::size_t>(max_value_classes)) {
        throw std::invalid_argument(
            "DIA matrix: row classes for " + std::to_string(row_classes.size()) + " rows and " +
            std::to_string(class_values.size()) + " class values, for " + std::to_string(n) +
            " rows of " + std::to_string(diagonals) + " diagonals");
    }
    row_classes_ = std::move(row_classes);
    class_values_ = Array<T>::from_host(this->backend_, class_values);
}

template <typename T>
DiaMatrix<T>::DiaMatrix(std::shared_ptr<const Backend> backend, const DiaData<T>& data,
                        DiaStorage storage)
    : StoredMatrix<T>(std::move(backend), data.n), host_offsets_(data.offsets) {
    if (this->rows_ < 0) throw std::invalid_argument("DIA matrix: negative size");
    const std::size_t expected = data.offsets.size() * static_cast<std::size_t>(this->rows_);
    if (data.values.size() != expected) {
        throw std::invalid_argument("DIA matrix: " + std::to_string(data.offsets.size()) +
                                    " diagonals of " + std::to_string(this->rows_) + " rows need " +
                                    std::to_string(expected) + " values, got " +
                                    std::to_string(data.values.size()));
    }
    check_offsets(data.offsets, this->rows_);
    storage_ = storage;
    if (storage == DiaStorage::stencil) {
        Stencil<T> stencil = constant_coefficients(data);
        host_constants_ = std::move(stencil.constants);
        row_masks_ = Array<std::uint8_t>::from_host(this->backend_, stencil.masks);
    } else if (storage == DiaStorage::classes) {
        const int diagonals = data.num_diagonals();
        const auto classes =
            classify_values<T>(data.n, diagonals, diagonals, [&](int d, std::int64_t i) {
                const std::int64_t j = i + data.offsets[static_cast<std::size_t>(d)];
                return j >= 0 && j < data.n ? data.at(d, i) : T(0);
            });
        if (!classes) {
            throw std::invalid_argument("row-class storage needs at most " +
                                        std::to_string(max_value_classes) +
                                        " distinct rows; the matrix has more");
        }
        row_classes_ = Array<std::uint8_t>::from_host(this->backend_, classes->of_point);
        class_values_ = Array<T>::from_host(this->backend_, classes->table);
    } else {
        values_ = Array<T>::from_host(this->backend_, data.values);
    }
}

template <typename T>
template <typename U>
requires(!std::is_same_v<U, T>) DiaMatrix<T>::DiaMatrix(const DiaMatrix<U>& other)
    : StoredMatrix<T>(other.backend(), static_cast<std::int64_t>(other.size())),
      host_offsets_(other.host_offsets_),
      storage_(other.storage_),
      host_constants_(other.host_constants_.begin(), other.host_constants_.end()) {
    // The values rounded (or widened) on the back-end.
    const auto converted = [&](const Array<U>& from) {
        Array<T> to(this->backend_, from.size());
        if (to.size() > 0) {
            this->backend_->template kernels<U>().copy_to_other(*this->backend_, to.size(),
                                                                from.data(), to.data());
        }
        return to;
    };
    if (other.is_stencil()) {
        row_masks_ = other.row_masks_.clone();
    } else if (other.storage_ == DiaStorage::classes) {
        row_classes_ = other.row_classes_.clone();
        class_values_ = converted(other.class_values_);
    } else {
        values_ = converted(other.values_);
    }
}

template <typename T>
void DiaMatrix<T>::apply(const Array<T>& x, Array<T>& y) const {
    if (x.size() != this->size() || y.size() != this->size()) {
        throw DimensionMismatch("DIA SpMV: matrix has " + std::to_string(this->rows_) +
                                " rows, x has " + std::to_string(x.size()) + ", y has " +
                                std::to_string(y.size()));
    }
    this->backend_->template kernels<T>().dia_spmv(*this->backend_, view(), x.data(), y.data());
}

template <typename T>
Array<T> DiaMatrix<T>::diagonal() const {
    Array<T> diagonal(this->backend_, this->size());
    int main = -1;
    for (std::size_t d = 0; d < host_offsets_.size(); ++d) {
        if (host_offsets_[d] == 0) main = static_cast<int>(d);
    }
    if (main < 0) {
        this->backend_->template kernels<T>().fill(*this->backend_, this->size(), T(0),
                                                   diagonal.data());
    } else if (storage_ != DiaStorage::general) {  // from the masks or the classes
        this->backend_->template kernels<T>().dia_diagonal(*this->backend_, view(), main,
                                                           diagonal.data());
    } else if (this->rows_ > 0) {
        this->backend_->copy(diagonal.data(),
                             values_.data() + static_cast<std::size_t>(main) * this->size(),
                             this->size() * sizeof(T));
    }
    return diagonal;
}

template <typename T>
DiaView<T> DiaMatrix<T>::view() const {
    DiaView<T> view{
        this->rows_, static_cast<int>(host_offsets_.size()), {}, values_.data(), row_masks_.data()};
    std::copy(host_offsets_.begin(), host_offsets_.end(), view.offsets);
    std::copy(host_constants_.begin(), host_constants_.end(), view.constants);
    if (storage_ == DiaStorage::classes) {
        view.values = nullptr;
        view.row_classes = row_classes_.data();
        view.class_values = class_values_.data();
    }
    return view;
}

template <typename T>
DiaData<T> DiaMatrix<T>::host_data() const {
    DiaData<T> data;
    data.n = this->rows_;
    data.offsets = host_offsets_;
    if (storage_ == DiaStorage::general) {
        data.values = values_.to_host();
        return data;
    }
    data.values.assign(host_offsets_.size() * static_cast<std::size_t>(data.n), T(0));
    if (storage_ == DiaStorage::classes) {
        const std::vector<std::uint8_t> classes = row_classes_.to_host();
        const std::vector<T> table = class_values_.to_host();
        const auto diagonals = static_cast<std::size_t>(data.num_diagonals());
        for (int d = 0; d < data.num_diagonals(); ++d) {
#pragma omp parallel for schedule(static)
            for (std::int64_t i = 0; i < data.n; ++i) {
                data.at(d, i) = table[classes[static_cast<std::size_t>(i)] * diagonals +
                                      static_cast<std::size_t>(d)];
            }
        }
        return data;
    }
    const std::vector<std::uint8_t> masks = row_masks_.to_host();
    for (int d = 0; d < data.num_diagonals(); ++d) {
        const T constant = host_constants_[static_cast<std::size_t>(d)];
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < data.n; ++i) {
            const unsigned mask = masks[static_cast<std::size_t>(i)];
            const bool identity = data.num_diagonals() < 8 && (mask & stencil_unit_row);
            if ((mask >> d) & 1u) data.at(d, i) = identity ? T(1) : constant;
        }
    }
    return data;
}

template class DiaMatrix<float>;
template class DiaMatrix<double>;
template DiaMatrix<float>::DiaMatrix(const DiaMatrix<double>&);
template DiaMatrix<double>::DiaMatrix(const DiaMatrix<float>&);

}  // namespace simrun::solvers
