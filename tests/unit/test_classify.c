/*
 * test_classify.c - the kernel classifier: shipped rules against real
 * kernel names, rule-file errors, thread safety.  Labelling a database and
 * the command: test_classify_db.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <sqlite3.h>

#include "cvc/cvc_classify.h"
#include "testutil.h"

/* ---- examples: real names (traces under ../shared, notes b.1) ------------- */

struct example {
	const char *name;
	const char *cls;
	const char *coll, *algo, *proto, *dtype; /* NULL = not checked, "" = empty */
};

static const struct example examples[] = {
	/* NCCL >= 2.19 (notes b.1, b.3; 2.28.9 symbol set) */
	{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
	 "allreduce", "allreduce", "RING", "LL", "bf16"},
	{"ncclDevKernel_AllReduce_Sum_f32_TREE_LL(ncclDevKernelArgsStorage<4096ul>)",
	 "allreduce", "allreduce", "TREE", "LL", "f32"},
	{"_Z24ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE",
	 "allgather", "allgather", "RING", "LL", ""},
	{"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "allgather",
	 "allgather", "RING", "LL", ""},
	{"_Z38ncclDevKernel_ReduceScatter_Sum_f8e4m3_RING_LL24ncclDevKernelArgsStorageILm4096EE",
	 "reducescatter", "reducescatter", "RING", "LL", "f8e4m3"},
	{"ncclDevKernel_Reduce_Sum_u8_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "reduce",
	 "reduce", "RING", "LL", "u8"},
	{"ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "broadcast",
	 "broadcast", "RING", "LL", ""},
	{"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "sendrecv", "sendrecv",
	 "", "", ""},
	{"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "other-comm", "generic",
	 "", "", ""},
	/* RCCL on AMD: same family, numbered generic kernels */
	{"ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", "other-comm", "generic",
	 NULL, NULL, NULL},
	/* NCCL <= 2.18 (traces: param-dlrm, hta-*) */
	{"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
	 "sendrecv", "sendrecv", "RING", "SIMPLE", "int8_t"},
	{"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "allreduce", "allreduce",
	 "RING", "LL", "float"},
	{"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
	 "allreduce", "allreduce", "RING", "LL", "float"},
	{"ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
	 "broadcast", "broadcast", "RING", "LL", "int8_t"},
	{"ncclKernel_AllReduce_RING_LL_Sum_half(ncclDevComm*, unsigned long, ncclWork*)",
	 "allreduce", "allreduce", "RING", "LL", "half"},
	{"_Z43ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_tP11ncclDevCommmP8ncclWork", "sendrecv",
	 "sendrecv", "RING", "SIMPLE", "int8_t"},
	/* legacy NCCL 2.3-2.7 */
	{"ncclAllReduceRingLLKernel_sum_f32(ncclColl)", "allreduce", "allreduce", "Ring",
	 "LL", "f32"},
	/* NCCL 2.27/2.28 symmetric kernels */
	{"ncclSymkDevKernel_AllReduce_RSxLD_AGxST_sum_bf16(ncclSymkDevWorkArgs4K)",
	 "allreduce", "allreduce", "", "", "bf16"},
	{"ncclSymkDevKernel_AllGather_LLMC(ncclSymkDevWorkArgs4K)", "allgather", "allgather",
	 "", "", ""},
	{"ncclSymDevKernel_ReduceScatter_LD_sum_f32", "reducescatter", "reducescatter", "",
	 "", "f32"},
	/* an NCCL name no specific rule knows still counts as communication */
	{"ncclKernelFuture_Unknown(ncclDevComm*)", "other-comm", "", "", "", ""},
	{"ncclAllToAll_custom_kernel", "alltoall", "alltoall", NULL, NULL, NULL},
	/* MSCCL / RCCL-prefixed */
	{"mscclKernel_Sum_half_LL128(ncclDevComm*, mscclAlgo*, mscclWork*)", "other-comm", "",
	 NULL, NULL, NULL},
	{"rcclKernel_AllGather_internal(void*)", "allgather", "allgather", NULL, NULL, NULL},
	/* expert parallel */
	{"void deep_ep::intranode::dispatch<8, 768, 6144>(int4*, float*, int*, long*, float*, int*, int*, int4 const*, float const*, long const*, float const*, bool const*, int const*, int, int, int, int, int, int, int, void**, int, int, int)",
	 "alltoall", "alltoall", "", "", ""},
	{"void deep_ep::internode_ll::combine<7168, 9>(void*, void*, int*, void*, void const*, long const*, float const*, int const*, long const*, int*, int*, void*, int, int, int, int, int, int, int, int, int, int, bool, bool)",
	 "alltoall", "alltoall", NULL, NULL, NULL},
	{"void deep_ep::intranode::barrier<8>(int**, int)", "other-comm", "", NULL, NULL, NULL},
	/* a DeepEP build in its own namespace (issue 14, item 9) */
	{"void dpsk::ep::internode::dispatch<false, 8, 256>(int4*, float*, int, int)", "alltoall",
	 NULL, NULL, NULL, NULL},
	{"void dpsk::ep::internode::notify_dispatch<8>(int const*, int*, int)", "alltoall", NULL,
	 NULL, NULL, NULL},
	{"void dpsk::ep::internode_ll::clean_low_latency_buffer<32>(int*, int)", "other-comm", "",
	 NULL, NULL, NULL},
	/* "keep" or "deep" before ep:: is not the namespace */
	{"void sleep::intranode_helper(int)", "other", NULL, NULL, NULL, NULL},
	{"void pplx::dispatchKernel<unsigned int, 32u>(int, unsigned long, void*)", "alltoall",
	 NULL, NULL, NULL, NULL},
	{"nvshmemi_barrier_all_on_stream_kernel()", "other-comm", NULL, NULL, NULL, NULL},
	{"void nvshmemi_transfer_rma_kernel<(nvshmemi_op_t)1>(void*, void*, unsigned long, int)",
	 "alltoall", NULL, NULL, NULL, NULL},
	{"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)",
	 "allreduce", "allreduce", NULL, NULL, NULL},
	/* attention */
	{"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, false, true, false, false>(pytorch_flash::Flash_fwd_params)",
	 "attention", "", "", "", ""},
	{"void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t> >(Flash_bwd_params)",
	 "attention", NULL, NULL, NULL, NULL},
	{"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90> > > >(flash::FlashAttnFwdSm90::Params)",
	 "attention", NULL, NULL, NULL, NULL},
	{"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
	 "attention", NULL, NULL, NULL, NULL},
	{"fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
	 "attention", NULL, NULL, NULL, NULL},
	{"void attention_kernel_batched_impl<AttentionKernel<cutlass::half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, false> >(AttentionKernel::Params)",
	 "attention", NULL, NULL, NULL, NULL},
	{"_attn_fwd", "attention", NULL, NULL, NULL, NULL},
	/* convolution (real names: hta-nccl-args ResNet trace) */
	{"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
	 "conv", NULL, NULL, NULL, NULL},
	{"sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x64_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train",
	 "conv", NULL, NULL, NULL, NULL},
	{"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4::Params)",
	 "conv", NULL, NULL, NULL, NULL},
	{"_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22ImplicitGemmMultistageEEEEEvNT_6ParamsE",
	 "conv", NULL, NULL, NULL, NULL},
	{"void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
	 "conv", NULL, NULL, NULL, NULL},
	{"cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1", "conv", NULL, NULL, NULL,
	 NULL},
	{"void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>(void*, void const*, float, int, int)",
	 "conv", NULL, NULL, NULL, NULL},
	/* GEMM */
	{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
	 "gemm", "", "", "", ""},
	{"sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x256x64_stage3_warpsize2x4x1_tensor16x8x16_kernel",
	 "gemm", NULL, NULL, NULL, NULL},
	{"volta_sgemm_128x32_nt", "gemm", NULL, NULL, NULL, NULL},
	{"ampere_sgemm_128x128_tn", "gemm", NULL, NULL, NULL, NULL},
	{"void gemmSN_TN_kernel<float, 128, 16, 2, 4, 8, 9, false, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)",
	 "gemm", NULL, NULL, NULL, NULL},
	{"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)",
	 "gemm", NULL, NULL, NULL, NULL},
	{"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", "gemm", NULL, NULL, NULL, NULL},
	{"void splitKreduce_kernel<float, float, float, float, true, false, false>(cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*)",
	 "gemm", NULL, NULL, NULL, NULL},
	{"void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, cublasLtEpilogue_t, int, float*, long, void*, long, long, long, float*, long, int*)",
	 "gemm", NULL, NULL, NULL, NULL},
	{"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, float, float)",
	 "gemm", NULL, NULL, NULL, NULL},
	{"Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI32x32x8x1_SN_1LDSB1_APM1", "gemm", NULL, NULL,
	 NULL, NULL},
	/* normalization, softmax */
	{"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
	 "norm", NULL, NULL, NULL, NULL},
	{"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, long, float const*, float const*, float const*, float const*, float*, float*)",
	 "norm", NULL, NULL, NULL, NULL},
	{"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)",
	 "norm", NULL, NULL, NULL, NULL},
	{"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)",
	 "norm", NULL, NULL, NULL, NULL},
	{"void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)",
	 "norm", NULL, NULL, NULL, NULL},
	{"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*, float const*, int, int, int, bool const*, int, bool)",
	 "softmax", NULL, NULL, NULL, NULL},
	{"triton_per_fused__softmax_0", "softmax", NULL, NULL, NULL, NULL},
	/* embeddings (real names: param-dlrm, hta-a100-80g) */
	{"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 5ul>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>)",
	 "embedding", NULL, NULL, NULL, NULL},
	{"void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float, float, float, 5ul>(at::GenericPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits, int>)",
	 "embedding", NULL, NULL, NULL, NULL},
	{"void permute_pooled_embs_kernel<float>(float const*, long const*, long const*, long const*, float*, long, long, long)",
	 "embedding", NULL, NULL, NULL, NULL},
	{"void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)",
	 "embedding", NULL, NULL, NULL, NULL},
	/* optimizer */
	{"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float, float, float, float, float, adamMode_t, float, int, int>(int, int volatile*, TensorListMetadata<4>, AdamFunctor<float>, float, float, float, float, float, float, adamMode_t, float, int, int)",
	 "optimizer", NULL, NULL, NULL, NULL},
	{"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)",
	 "optimizer", NULL, NULL, NULL, NULL},
	{"void adagrad_update_kernel<float>(float*, float*, float const*, float, float, long)",
	 "optimizer", NULL, NULL, NULL, NULL},
	/* copies */
	{"Memcpy DtoD (Device -> Device)", "copy", NULL, NULL, NULL, NULL},
	{"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
	 "copy", NULL, NULL, NULL, NULL},
	{"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})",
	 "copy", NULL, NULL, NULL, NULL},
	{"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)",
	 "copy", NULL, NULL, NULL, NULL},
	{"void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1} const&)::{lambda(int)#1}>(long, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1} const&)::{lambda(int)#1})",
	 "copy", NULL, NULL, NULL, NULL},
	{"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
	 "copy", NULL, NULL, NULL, NULL},
	/* reductions */
	{"void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
	 "reduction", NULL, NULL, NULL, NULL},
	{"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::Policy800, false, long, int, int, int>(int*, int*, int*, int const*, long*, long const*, int*, int const*, int, int, int)",
	 "reduction", NULL, NULL, NULL, NULL},
	{"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)",
	 "reduction", NULL, NULL, NULL, NULL},
	{"void clover::par_reduce_kernel<field_summary(global_variables &, parallel_ &)::[lambda(int) (instance 1)]>(T1)",
	 "reduction", NULL, NULL, NULL, NULL},
	{"triton_red_fused_sum_0", "reduction", NULL, NULL, NULL, NULL},
	/* a binary search is not a sort */
	{"void at::native::(anonymous namespace)::searchsorted_cuda_kernel<float, long>(long*, float const*, float const*, long const*, long, long, long, bool, bool)",
	 "other", "", "", "", ""},
	/* elementwise */
	{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
	 "elementwise", "", "", "", ""},
	{"triton__0d1d2d3d", "elementwise", NULL, NULL, NULL, NULL},
	{"triton_poi_fused_add_mul_0", "elementwise", NULL, NULL, NULL, NULL},
	{"saxpy(double *, double *, double *, double, int)", "elementwise", NULL, NULL, NULL,
	 NULL},
	{"void clover::par_ranged2d_kernel<ideal_gas_kernel(int, int, int, int, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &)::[lambda(int, int) (instance 1)]>(clover::Range2d, T1)",
	 "elementwise", NULL, NULL, NULL, NULL},
	{"void vllm::act_and_mul_kernel<c10::BFloat16, &(c10::BFloat16 vllm::silu_kernel<c10::BFloat16>(c10::BFloat16 const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)",
	 "elementwise", NULL, NULL, NULL, NULL},
	/* "nccl" inside a non-NCCL name is not communication */
	{"void at::native::some_nccl_helper_kernel<float>(float*)", "other", "", "", "", ""},
	/* nothing known */
	{"my_custom_kernel(float*)", "other", "", "", "", ""},
};

#define NEX (sizeof examples / sizeof examples[0])

static cvc_rules *load_default(void)
{
	cvc_rules *r = NULL;
	char err[512] = "";

	cr_assert_eq(cvc_rules_default(&r, err, sizeof err), CVC_OK, "%s", err);
	cr_assert(cvc_rules_count(r) > 0);
	return r;
}

static void check_field(const char *ex, const char *want, const char *got, const char *what)
{
	if (want)
		cr_expect_str_eq(got, want, "'%s': %s is '%s', want '%s'", ex, what, got, want);
}

Test(classify, class_names_round_trip)
{
	for (int c = 0; c < CVC_CLS_COUNT; c++) {
		cvc_op_class back;
		const char *n = cvc_class_name((cvc_op_class)c);

		cr_assert(n);
		cr_assert_eq(cvc_class_parse(n, &back), CVC_OK, "%s", n);
		cr_assert_eq((int)back, c);
		cr_assert_eq(cvc_class_is_comm((cvc_op_class)c),
			     c >= CVC_CLS_ALLREDUCE && c <= CVC_CLS_OTHER_COMM);
	}
	cr_assert_null(cvc_class_name(CVC_CLS_COUNT));
	cr_assert_str_eq(cvc_class_name(CVC_CLS_OTHER_COMM), "other-comm");
	{
		cvc_op_class x;

		cr_assert_eq(cvc_class_parse("comm", &x), CVC_ERR_NOTFOUND);
		cr_assert_eq(cvc_class_parse("GEMM", &x), CVC_ERR_NOTFOUND);
	}
}

/* Every example gets its class and captures, and every shipped rule has an example. */
Test(classify, shipped_rules_on_examples)
{
	cvc_rules *r = load_default();
	size_t nrules = cvc_rules_count(r);
	int *hit = calloc(nrules, sizeof *hit);

	cr_assert(hit);
	for (size_t i = 0; i < NEX; i++) {
		const struct example *e = &examples[i];
		cvc_class_match m;

		cr_assert_eq(cvc_rules_match(r, e->name, strlen(e->name), &m), CVC_OK);
		cr_expect_str_eq(cvc_class_name(m.cls), e->cls, "'%s': class %s, want %s (rule %d)",
				 e->name, cvc_class_name(m.cls), e->cls, m.rule);
		check_field(e->name, e->coll, m.coll, "coll");
		check_field(e->name, e->algo, m.algo, "algo");
		check_field(e->name, e->proto, m.proto, "proto");
		check_field(e->name, e->dtype, m.dtype, "dtype");
		if (m.rule >= 0)
			hit[m.rule]++;
		else
			cr_expect_eq(m.cls, CVC_CLS_OTHER);
	}
	for (size_t i = 0; i < nrules; i++)
		cr_expect(hit[i] > 0, "rule %zu (default.rules line %d) has no example", i,
			  cvc_rules_line(r, (int)i));
	free(hit);
	cvc_rules_free(r);
}

/* The length argument bounds the subject: no reading past it. */
Test(classify, match_respects_length)
{
	cvc_rules *r = load_default();
	cvc_class_match m;
	const char *s = "volta_sgemm_128x32_nt";

	cr_assert_eq(cvc_rules_match(r, s, 5, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER, "'volta' alone is no gemm");
	cr_assert_eq(m.rule, -1);
	cr_assert_eq(cvc_rules_match(r, s, strlen(s), &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_GEMM);
	cr_assert_eq(cvc_rules_match(r, "", 0, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER);
	cvc_rules_free(r);
}

/* ---- real trace names ----------------------------------------------------- */

struct tname {
	char *name;
	double dur_us;
	long count;
};

struct tnames {
	struct tname *v;
	size_t n, cap;
};

static void tn_add(struct tnames *t, const char *name, double dur)
{
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->v[i].name, name) == 0) {
			t->v[i].dur_us += dur;
			t->v[i].count++;
			return;
		}
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->v = realloc(t->v, t->cap * sizeof *t->v);
		cr_assert(t->v);
	}
	t->v[t->n].name = strdup(name);
	t->v[t->n].dur_us = dur;
	t->v[t->n].count = 1;
	cr_assert(t->v[t->n].name);
	t->n++;
}

static const char *const kineto_traces[] = {
	"traces/hta-ddp-v100-2rank/df_index_resolver.json.gz",
	"traces/hta-trace-diff-a100-w8/control.json.gz",
	"traces/hta-trace-diff-v100-w2/test.json.gz",
	"traces/hta-nccl-args-a100-w2/nccl_data.json.gz",
	"traces/hta-a100-80g-w16-rank0/rank0.json.gz",
	"traces/tracelens-h100-qwen05b/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
	"traces/param-dlrm-8xv100/worker0_step_12.1694128201545.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker1_step_12.1694128201556.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker2_step_12.1694128201554.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker3_step_12.1694128201557.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker4_step_12.1694128201547.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker5_step_12.1694128201549.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker6_step_12.1694128201553.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker7_step_12.1694128201553.pt.trace.json.gz",
};

/* Kernel names and summed durations of one Kineto trace ("cat": "kernel"). */
static void kineto_names(const char *gz, const char *dir, struct tnames *t)
{
	const char *raw = tu_gunzip(gz, dir);
	json_object *root = json_object_from_file(raw), *evs = NULL;
	size_t n;

	cr_assert(root, "cannot parse %s", raw);
	cr_assert(json_object_object_get_ex(root, "traceEvents", &evs), "%s: no traceEvents", gz);
	n = json_object_array_length(evs);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(evs, i), *cat, *name, *dur;

		if (!json_object_object_get_ex(e, "cat", &cat) ||
		    strcmp(json_object_get_string(cat), "kernel") != 0 ||
		    !json_object_object_get_ex(e, "name", &name))
			continue;
		tn_add(t, json_object_get_string(name),
		       json_object_object_get_ex(e, "dur", &dur) ? json_object_get_double(dur)
								 : 0.0);
	}
	json_object_put(root);
	remove(raw);
}

/* Kernel names of an Nsight Systems export (demangled, as the importer reads them). */
static void nsys_names(const char *gz, const char *dir, struct tnames *t)
{
	const char *raw = tu_gunzip(gz, dir);
	sqlite3 *sq = NULL;
	sqlite3_stmt *st = NULL;

	cr_assert_eq(sqlite3_open_v2(raw, &sq, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(sq, "SELECT s.value, k.end - k.start FROM "
				       "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
				       "ON s.id = k.demangledName", -1, &st, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(sq));
	while (sqlite3_step(st) == SQLITE_ROW)
		tn_add(t, (const char *)sqlite3_column_text(st, 0),
		       (double)sqlite3_column_int64(st, 1) / 1e3);
	sqlite3_finalize(st);
	sqlite3_close(sq);
	remove(raw);
}

static int hta_is_nccl(const char *s)
{
	return strncmp(s, "nccl", 4) == 0 || strstr(s, "ncclKernel") ||
	       strstr(s, "ncclDevKernel");
}

/*
 * Over every shared trace: a kernel is communication exactly when HTA's
 * rule says NCCL, and the kernel time left in `other` stays small.
 */
Test(classify, shared_traces, .timeout = 300)
{
	const char *dir = tu_tmpdir();
	struct tnames t = {0};
	cvc_rules *r;
	double all_us = 0, other_us = 0;
	size_t comm = 0, other_names = 0;

	for (size_t i = 0; i < sizeof kineto_traces / sizeof kineto_traces[0]; i++)
		kineto_names(tu_shared(kineto_traces[i]), dir, &t);
	nsys_names(tu_shared("traces/pipit-nsys-sqlite-perlmutter/perlmutter-cloverleaf-cuda.sqlite.gz"),
		   dir, &t);
	nsys_names(tu_shared("traces/pipit-nsys-sqlite-perlmutter/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"),
		   dir, &t);
	cr_assert(t.n > 300, "only %zu distinct kernel names read", t.n);
	r = load_default();
	for (size_t i = 0; i < t.n; i++) {
		cvc_class_match m;

		cr_assert_eq(cvc_rules_match(r, t.v[i].name, strlen(t.v[i].name), &m), CVC_OK);
		cr_expect_eq(cvc_class_is_comm(m.cls), !!hta_is_nccl(t.v[i].name),
			     "'%s' is %s", t.v[i].name, cvc_class_name(m.cls));
		comm += cvc_class_is_comm(m.cls);
		all_us += t.v[i].dur_us;
		if (m.cls == CVC_CLS_OTHER) {
			other_us += t.v[i].dur_us;
			other_names++;
			cr_log_info("unclassified: %.0f us  %.150s", t.v[i].dur_us, t.v[i].name);
		}
	}
	cr_log_info("%zu distinct kernel names, %zu communication, %zu unclassified; "
		    "unclassified time %.3f%% of %.0f us",
		    t.n, comm, other_names, 100.0 * other_us / all_us, all_us);
	cr_expect(comm >= 5, "the traces hold 5 distinct NCCL kernel names, got %zu", comm);
	/* measured 0.003% (1 name, searchsorted) with the shipped rules; 1% leaves room */
	cr_expect(other_us < 0.01 * all_us, "unclassified kernel time %.2f%%",
		  100.0 * other_us / all_us);
	for (size_t i = 0; i < t.n; i++)
		free(t.v[i].name);
	free(t.v);
	cvc_rules_free(r);
}

/* ---- rule files ------------------------------------------------------------- */

static cvc_status load_text(const char *text, char *err, size_t errlen, const char **pathp,
			    cvc_rules **out)
{
	const char *path = tu_path(tu_tmpdir(), "user.rules");

	cr_assert_eq(tu_write(path, text, strlen(text)), 0);
	if (pathp)
		*pathp = path;
	return cvc_rules_load(path, out, err, errlen);
}

Test(classify, bad_regex_message)
{
	char err[512] = "", want[1024];
	const char *path;
	cvc_rules *r = NULL;

	/* the regex starts at column 6 (after "gemm\t"); PCRE2 reports offset 7, the end */
	cr_assert_eq(load_text("# mine\n\ngemm\tfoo(bar\n", err, sizeof err, &path, &r),
		     CVC_ERR_FORMAT);
	cr_assert_null(r);
	snprintf(want, sizeof want, "'%s': line 3, column 13: missing closing parenthesis", path);
	cr_assert_str_eq(err, want);
	/* flags shift the column too */
	cr_assert_eq(load_text("copy   icase=1  a[b\n", err, sizeof err, &path, &r),
		     CVC_ERR_FORMAT);
	snprintf(want, sizeof want,
		 "'%s': line 1, column 20: missing terminating ] for character class", path);
	cr_assert_str_eq(err, want);
}

Test(classify, unknown_class_message)
{
	char err[512] = "", want[1024];
	const char *path;
	cvc_rules *r = NULL;

	cr_assert_eq(load_text("gemm gemm\nfoo  bar\n", err, sizeof err, &path, &r),
		     CVC_ERR_FORMAT);
	snprintf(want, sizeof want, "'%s': line 2: unknown class 'foo' (expected one of gemm, "
		 "attention, conv, norm, softmax, elementwise, reduction, optimizer, embedding, "
		 "copy, allreduce, allgather, reducescatter, broadcast, reduce, sendrecv, "
		 "alltoall, other-comm, other, comm)", path);
	cr_assert_str_eq(err, want);
}

Test(classify, other_file_errors)
{
	char err[512] = "";
	cvc_rules *r = NULL;
	const char *path;

	cr_assert_eq(load_text("gemm\n", err, sizeof err, &path, &r), CVC_ERR_FORMAT);
	cr_assert(strstr(err, "line 1, column 5: expected a regex after class 'gemm'"), "%s", err);
	cr_assert_eq(load_text("gemm icase=2 x\n", err, sizeof err, &path, &r), CVC_ERR_FORMAT);
	cr_assert(strstr(err, "line 1, column 12: expected icase=0 or icase=1"), "%s", err);
	cr_assert_eq(load_text("gemm a\0b\n", err, sizeof err, &path, &r), CVC_OK, "%s", err);
	cvc_rules_free(r);
	r = NULL;
	{
		const char *p = tu_path(tu_tmpdir(), "nul.rules");

		cr_assert_eq(tu_write(p, "gemm a\0b\n", 9), 0);
		cr_assert_eq(cvc_rules_load(p, &r, err, sizeof err), CVC_ERR_FORMAT);
		cr_assert(strstr(err, "line 1, column 7: unexpected NUL byte"), "%s", err);
	}
	cr_assert_eq(cvc_rules_load("/nonexistent/x.rules", &r, err, sizeof err),
		     CVC_ERR_NOTFOUND);
	cr_assert(strstr(err, "'/nonexistent/x.rules': "), "%s", err);
	{
		/* a line over the cap */
		size_t n = 9000;
		char *big = malloc(n + 8);

		cr_assert(big);
		memcpy(big, "gemm ", 5);
		memset(big + 5, 'a', n);
		big[n + 5] = '\n';
		big[n + 6] = '\0';
		cr_assert_eq(load_text(big, err, sizeof err, &path, &r), CVC_ERR_FORMAT);
		cr_assert(strstr(err, "line 1: longer than"), "%s", err);
		free(big);
	}
}

/* User rules: comments, CRLF, icase, `comm` derivation, duplicate capture names. */
Test(classify, user_rules_semantics)
{
	char err[512] = "";
	cvc_rules *r = NULL;
	cvc_class_match m;
	const char *text =
		"# comment\r\n"
		"   # indented comment\n"
		"comm\t^my(?<coll>AllGather|Send)_(?<algo>[A-Z]+)|^their_(?<coll>alltoall)\r\n"
		"comm  ^lonely_comm\n"
		"gemm  icase=1 MATMUL   \n"
		"norm  norm$\n";

	cr_assert_eq(load_text(text, err, sizeof err, NULL, &r), CVC_OK, "%s", err);
	cr_assert_eq(cvc_rules_count(r), 4);
	cr_assert_eq(cvc_rules_line(r, 0), 3);
	cr_assert_eq(cvc_rules_line(r, 3), 6);
	cr_assert_eq(cvc_rules_line(r, 4), 0);
	cr_assert_eq(cvc_rules_match(r, "myAllGather_RING", 16, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_ALLGATHER);
	cr_assert_str_eq(m.coll, "allgather");
	cr_assert_str_eq(m.algo, "RING");
	cr_assert_eq(m.rule, 0);
	cr_assert_eq(cvc_rules_match(r, "mySend_X", 8, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_SENDRECV);
	cr_assert_eq(cvc_rules_match(r, "their_alltoall", 14, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_ALLTOALL, "second group of the same name");
	cr_assert_eq(cvc_rules_match(r, "lonely_comm", 11, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER_COMM);
	cr_assert_str_eq(m.coll, "");
	cr_assert_eq(cvc_rules_match(r, "x_matmul_y", 10, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_GEMM, "icase=1 and trailing blanks trimmed");
	cr_assert_eq(cvc_rules_match(r, "layer_norm", 10, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_NORM);
	cr_assert_eq(m.rule, 3);
	cr_assert_eq(cvc_rules_match(r, "layer_norm_x", 12, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER);
	cvc_rules_free(r);
	/* an empty file is a valid rule set that matches nothing */
	cr_assert_eq(load_text("", err, sizeof err, NULL, &r), CVC_OK, "%s", err);
	cr_assert_eq(cvc_rules_count(r), 0);
	cr_assert_eq(cvc_rules_match(r, "volta_sgemm", 11, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER);
	cvc_rules_free(r);
}

/* A catastrophic regex gives up on the match limit instead of hanging. */
Test(classify, backtracking_is_bounded, .timeout = 20)
{
	char err[512] = "", name[4096];
	cvc_rules *r = NULL;
	cvc_class_match m;

	cr_assert_eq(load_text("gemm (?:a|a)*(?:a|a)*(?:a|a)*b\ncopy a\n", err, sizeof err,
			       NULL, &r), CVC_OK, "%s", err);
	memset(name, 'a', sizeof name);
	cr_assert_eq(cvc_rules_match(r, name, sizeof name, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_COPY, "the runaway rule counts as not matching");
	cvc_rules_free(r);
}

/* ---- threads ------------------------------------------------------------------ */

struct thr {
	const cvc_rules *r;
	int mismatches;
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;

	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < NEX; i++) {
			cvc_class_match m;
			cvc_op_class want;

			if (cvc_rules_match(t->r, examples[i].name, strlen(examples[i].name), &m) ||
			    cvc_class_parse(examples[i].cls, &want) || m.cls != want ||
			    (examples[i].coll && strcmp(m.coll, examples[i].coll) != 0))
				t->mismatches++;
		}
	}
	return NULL;
}

Test(classify, two_threads_share_rules)
{
	cvc_rules *r = load_default();
	struct thr a = {r, 0}, b = {r, 0};
	pthread_t ta, tb;

	cr_assert_eq(pthread_create(&ta, NULL, thr_main, &a), 0);
	cr_assert_eq(pthread_create(&tb, NULL, thr_main, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	cr_assert_eq(a.mismatches, 0);
	cr_assert_eq(b.mismatches, 0);
	cvc_rules_free(r);
}
