#pragma once
// Read access to a run's .h5 for the regression tests; every failure is an EXPECT failure.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace simrun::testing {

class RunFile {
public:
    explicit RunFile(const std::filesystem::path& path)
        : id_(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {}
    ~RunFile() {
        if (id_ >= 0) H5Fclose(id_);
    }
    RunFile(const RunFile&) = delete;
    RunFile& operator=(const RunFile&) = delete;
    bool is_open() const { return id_ >= 0; }
    bool exists(const std::string& path) const {
        return H5Lexists(id_, path.c_str(), H5P_DEFAULT) > 0;
    }

    // The values of a double dataset and its extent; empty when it cannot be read.
    std::vector<double> doubles(const std::string& path,
                                std::vector<hsize_t>* extent = nullptr) const {
        const hid_t data = H5Dopen2(id_, path.c_str(), H5P_DEFAULT);
        EXPECT_GE(data, 0) << path;
        if (data < 0) return {};
        const hid_t space = H5Dget_space(data);
        std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
        H5Sget_simple_extent_dims(space, dims.data(), nullptr);
        std::vector<double> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
        const herr_t status =
            H5Dread(data, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
        H5Sclose(space);
        H5Dclose(data);
        EXPECT_GE(status, 0) << path;
        if (extent != nullptr) *extent = dims;
        return status >= 0 ? values : std::vector<double>{};
    }
    template <typename T>
    T attribute(const std::string& object, const char* name, hid_t type) const {
        T value{};
        const hid_t attr = H5Aopen_by_name(id_, object.c_str(), name, H5P_DEFAULT, H5P_DEFAULT);
        EXPECT_GE(attr, 0) << object << " " << name;
        if (attr < 0) return value;
        EXPECT_GE(H5Aread(attr, type, &value), 0) << object << " " << name;
        H5Aclose(attr);
        return value;
    }
    std::string string_attribute(const std::string& object, const char* name) const {
        const hid_t attr = H5Aopen_by_name(id_, object.c_str(), name, H5P_DEFAULT, H5P_DEFAULT);
        EXPECT_GE(attr, 0) << object << " " << name;
        if (attr < 0) return {};
        const hid_t type = H5Aget_type(attr);
        std::string text(H5Tget_size(type), '\0');
        EXPECT_GE(H5Aread(attr, type, text.data()), 0);
        H5Tclose(type);
        H5Aclose(attr);
        return text.substr(0, text.find('\0'));
    }
    // The text of a scalar string dataset (as the run file stores its input and decisions).
    std::string text(const std::string& path) const {
        const hid_t data = H5Dopen2(id_, path.c_str(), H5P_DEFAULT);
        EXPECT_GE(data, 0) << path;
        if (data < 0) return {};
        const hid_t type = H5Dget_type(data);
        std::string value(H5Tget_size(type), '\0');
        EXPECT_GE(H5Dread(data, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, value.data()), 0) << path;
        H5Tclose(type);
        H5Dclose(data);
        return value.substr(0, value.find('\0'));
    }
    // The step indices under /steps, in order.
    std::vector<std::int64_t> steps() const {
        std::vector<std::int64_t> found;
        H5G_info_t info;
        const hid_t group = H5Gopen2(id_, "/steps", H5P_DEFAULT);
        EXPECT_GE(group, 0);
        if (group < 0) return found;
        H5Gget_info(group, &info);
        for (hsize_t n = 0; n < info.nlinks; ++n) {
            char name[64] = {};
            H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, n, name, sizeof name,
                               H5P_DEFAULT);
            found.push_back(std::stoll(name));
        }
        H5Gclose(group);
        return found;
    }

private:
    hid_t id_;
};

}  // namespace simrun::testing
