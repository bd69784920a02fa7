// The kernel table of one back-end: included at the end of each back-end's kernel source, inside
// its namespace, after fill, axpy, ..., dia_spmv are defined there.
// (No include guard: it is meant to be included once per back-end.)

template <typename T>
const KernelTable<T>& kernel_table() {
    static const KernelTable<T> table{
        .fill = &fill<T>,
        .axpy = &axpy<T>,
        .xpby = &xpby<T>,
        .multiply = &multiply<T>,
        .dot = &dot<T>,
        .dia_spmv = &dia_spmv<T>,
        .cg_step_1 = &cg_step_1<T>,
        .cg_step_2 = &cg_step_2<T>,
    };
    return table;
}

template const KernelTable<float>& kernel_table<float>();
template const KernelTable<double>& kernel_table<double>();
