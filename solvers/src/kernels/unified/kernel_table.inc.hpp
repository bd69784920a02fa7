// The kernel table of one back-end: included at the end of each back-end's kernel source, inside
// its namespace, after every kernel it names is declared there.
// (No include guard: it is meant to be included once per back-end.)

template <typename T>
const KernelTable<T>& kernel_table() {
    static const KernelTable<T> table{
        .fill = &fill<T>,
        .dia_diagonal = &dia_diagonal<T>,
        .copy_to_other = &copy_to_other<T>,
        .copy_part_to_other = &copy_part_to_other<T>,
        .axpy = &axpy<T>,
        .xpby = &xpby<T>,
        .multiply = &multiply<T>,
        .scaled_axpy = &scaled_axpy<T>,
        .gather = &gather<T>,
        .scatter = &scatter<T>,
        .add_couplings = &add_couplings<T>,
        .cg_step_1 = &cg_step_1<T>,
        .cg_step_2 = &cg_step_2<T>,
        .bicgstab_p = &bicgstab_p<T>,
        .bicgstab_update = &bicgstab_update<T>,
        .dot = &dot<T>,
        .dot_compensated = &dot_compensated<T>,
        .basis_dots = &basis_dots<T>,
        .basis_combine = &basis_combine<T>,
        .dia_spmv = &dia_spmv<T>,
        .csr_spmv = &csr_spmv<T>,
        .ell_spmv = &ell_spmv<T>,
        .coo_spmv = &coo_spmv<T>,
        .coo_workspace_bytes = &coo_workspace_bytes<T>,
        .dense_spmv = &dense_spmv<T>,
        .cg_iterations = &cg_iterations<T>,
        .fuses_cg_sweeps = &fuses_cg_sweeps<T>,
        .cg_sweep_iterations = &cg_sweep_iterations<T>,
        .bicgstab_iterations = &bicgstab_iterations<T>,
        .jacobi_iterations = &jacobi_iterations<T>,
        .dia_residual = &dia_residual<T>,
        .box_colour_sweep = &box_colour_sweep<T>,
        .box_colour_sweep_part = &box_colour_sweep_part<T>,
        .box_red_black_sweep = &box_red_black_sweep<T>,
        .fuses_red_black_sweep = &fuses_red_black_sweep<T>,
        .box_restrict = &box_restrict<T>,
        .box_interpolate_add = &box_interpolate_add<T>,
        .box_collapsed_weights = &box_collapsed_weights,
        .box_galerkin = &box_galerkin,
        .dia_inverse_diagonal = &dia_inverse_diagonal<T>,
        .box_copy_rows = &box_copy_rows,
        .box_zero_leaving = &box_zero_leaving,
        .classify_points = &classify_points<T>,
        .chebyshev_step = &chebyshev_step<T>,
        .sor_colour_sweep = &sor_colour_sweep<T>,
        .sor_sweeps = &sor_sweeps<T>,
    };
    return table;
}

template const KernelTable<float>& kernel_table<float>();
template const KernelTable<double>& kernel_table<double>();
