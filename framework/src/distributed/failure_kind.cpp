#include "simrun/framework/distributed/failure_kind.hpp"

#include <stdexcept>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/solvers/base/errors.hpp"
#include "simrun/solvers/matrices/matrix_market.hpp"

namespace simrun::framework {
namespace {

template <typename Error>
bool is(const std::exception& error) {
    return dynamic_cast<const Error*>(&error) != nullptr;
}

}  // namespace

FailureKind classify(const std::exception& error) {
    if (const auto* agreed = dynamic_cast<const AgreedFailure*>(&error)) return agreed->kind();
    if (is<InputError>(error) || is<solvers::MatrixMarketError>(error)) return FailureKind::input;
    if (is<solvers::NotCompiled>(error) || is<solvers::DeviceUnavailable>(error)) {
        return FailureKind::usage;
    }
    if (is<std::invalid_argument>(error)) return FailureKind::input;
    return FailureKind::failure;
}

FailureKind classify(std::exception_ptr error) {
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        return classify(e);
    } catch (...) {
        return FailureKind::failure;
    }
}

}  // namespace simrun::framework
