#pragma once
// DiaMatrix<T>: a square DIA matrix stored on a back-end (seed 004's format for structured
// grids: one contiguous array per diagonal, so the i-th thread reads the i-th entry of each).
#include <memory>
#include <vector>

#include "simrun/solvers/array.hpp"
#include "simrun/solvers/dia_data.hpp"
#include "simrun/solvers/linear_operator.hpp"

namespace simrun::solvers {

template <typename T>
class DiaMatrix final : public StoredMatrix<T> {
public:
    // Copies host data to the back-end. Throws std::invalid_argument when values.size() is not
    // offsets.size() * n, offsets are not sorted and distinct, or an offset is out of range.
    DiaMatrix(std::shared_ptr<const Backend> backend, const DiaData<T>& data);

    void apply(const Array<T>& x, Array<T>& y) const override;

    const std::vector<int>& offsets() const { return host_offsets_; }
    // The main diagonal (zero where no offset-0 diagonal is stored), on the back-end.
    Array<T> diagonal() const;
    DiaView<T> view() const;

private:
    std::vector<int> host_offsets_;
    Array<int> offsets_;
    Array<T> values_;
};

}  // namespace simrun::solvers
