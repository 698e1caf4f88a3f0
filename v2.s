	.file	"<string>"
	.section	.ltext,"axl",@progbits
	.globl	_ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx
	.p2align	4
	.type	_ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx,@function
_ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	pushq	%r15
	.cfi_def_cfa_offset 24
	pushq	%r14
	.cfi_def_cfa_offset 32
	pushq	%r13
	.cfi_def_cfa_offset 40
	pushq	%r12
	.cfi_def_cfa_offset 48
	pushq	%rbx
	.cfi_def_cfa_offset 56
	subq	$600, %rsp
	.cfi_def_cfa_offset 656
	.cfi_offset %rbx, -56
	.cfi_offset %r12, -48
	.cfi_offset %r13, -40
	.cfi_offset %r14, -32
	.cfi_offset %r15, -24
	.cfi_offset %rbp, -16
	movq	928(%rsp), %r12
	movq	872(%rsp), %r15
	movq	800(%rsp), %rbp
	movq	736(%rsp), %r13
	movq	680(%rsp), %r14
	movabsq	$NRT_incref, %rbx
	movq	%rdi, 192(%rsp)
	movq	%rdx, %rdi
	movq	%rsi, (%rsp)
	movq	%rdx, 184(%rsp)
	callq	*%rbx
	movq	%r14, %rdi
	callq	*%rbx
	movq	%r13, %rdi
	callq	*%rbx
	movq	%rbp, %rdi
	callq	*%rbx
	movq	%r15, %rdi
	callq	*%rbx
	movq	%r12, %rdi
	movq	1256(%rsp), %r12
	callq	*%rbx
	movq	984(%rsp), %rdi
	callq	*%rbx
	movq	1040(%rsp), %rdi
	callq	*%rbx
	movq	1096(%rsp), %rdi
	callq	*%rbx
	movq	1264(%rsp), %rdi
	callq	*%rbx
	testq	%r12, %r12
	js	.LBB0_78
	movq	%r12, %rax
	shrq	$61, %rax
	movabsq	$.const.picklebuf.58e14eccb507b1e0206981740223e685cb8c3c57, %rax
	jne	.LBB0_83
	movabsq	$-1152921504606846976, %rcx
	movabsq	$-2305843009213693952, %r14
	leaq	(%rcx,%r12,4), %rcx
	cmpq	%r14, %rcx
	jb	.LBB0_83
	movq	%r12, %r13
	shlq	$5, %r13
	movabsq	$NRT_MemInfo_alloc_aligned, %rbx
	movl	$32, %esi
	movq	%r13, %rdi
	callq	*%rbx
	testq	%rax, %rax
	je	.LBB0_77
	movq	%rax, %r15
	movq	24(%rax), %rax
	movl	$32, %esi
	movq	%r13, %rdi
	movq	%rax, 48(%rsp)
	callq	*%rbx
	testq	%rax, %rax
	je	.LBB0_77
	movq	%rax, 176(%rsp)
	movq	24(%rax), %rax
	movl	$32, %esi
	movq	%r13, %rdi
	movq	%rax, 40(%rsp)
	callq	*%rbx
	testq	%rax, %rax
	je	.LBB0_77
	movq	%r12, %rcx
	shrq	$58, %rcx
	movabsq	$.const.picklebuf.58e14eccb507b1e0206981740223e685cb8c3c57.14, %rcx
	jne	.LBB0_80
	addq	%r13, %r14
	shrq	$62, %r14
	cmpl	$3, %r14d
	jb	.LBB0_80
	movq	%rax, 168(%rsp)
	movq	24(%rax), %rax
	movq	%r12, %rdi
	shlq	$7, %rdi
	movl	$32, %esi
	movq	%rax, 24(%rsp)
	callq	*%rbx
	testq	%rax, %rax
	je	.LBB0_79
	movq	%rax, 160(%rsp)
	movq	24(%rax), %rax
	movl	$32, %esi
	movq	%r12, %rdi
	movq	%rax, 56(%rsp)
	callq	*%rbx
	testq	%rax, %rax
	je	.LBB0_81
	movq	24(%rax), %rbp
	movq	%rax, %rbx
	movabsq	$memset, %rax
	xorl	%esi, %esi
	movq	%r12, %rdx
	movq	%rbp, %rdi
	callq	*%rax
	testq	%r12, %r12
	je	.LBB0_82
	movq	664(%rsp), %r9
	movq	48(%rsp), %rsi
	movq	40(%rsp), %r10
	movq	24(%rsp), %r11
	movq	%rbx, 144(%rsp)
	movq	%r15, 152(%rsp)
	testq	%r9, %r9
	jle	.LBB0_75
	movq	%r9, %rax
	orq	%r12, %rax
	shrq	$32, %rax
	testq	%rax, %rax
	je	.LBB0_15
	je	.LBB0_15
	movq	%r9, %rax
	xorl	%edx, %edx
	divq	%r12
	cmpq	$1, %rdx
	sbbq	$-1, %rax
	testq	%rax, %rax
	jg	.LBB0_16
	jmp	.LBB0_75
.LBB0_15:
	movl	%r9d, %eax
	xorl	%edx, %edx
	divl	%r12d
	cmpq	$1, %rdx
	sbbq	$-1, %rax
	testq	%rax, %rax
	jle	.LBB0_75
.LBB0_16:
	movq	1336(%rsp), %rcx
	leaq	(%r12,%r12,8), %rdx
	movq	56(%rsp), %rdi
	leaq	(%r12,%r12,4), %r8
	movq	%r12, %r15
	shlq	$6, %r15
	vpcmpeqd	%ymm0, %ymm0, %ymm0
	movq	$0, 136(%rsp)
	movq	%rbp, 216(%rsp)
	leaq	(%rdx,%rdx,2), %rdx
	addq	%r12, %rdx
	movl	%ecx, %ebx
	movq	%r12, %rcx
	shlq	$4, %rcx
	movq	%rdx, 104(%rsp)
	shll	$4, %ebx
	addq	%rdi, 104(%rsp)
	addq	%rdi, %r13
	movq	%rcx, 72(%rsp)
	leaq	(%r12,%r12,2), %rcx
	andl	$32, %ebx
	movq	%r13, 224(%rsp)
	movq	%rbx, 120(%rsp)
	movq	%rcx, %rdx
	leaq	(%rdi,%rcx,4), %r14
	shlq	$4, %rcx
	shlq	$5, %rdx
	movq	%rcx, 88(%rsp)
	leaq	(%rdi,%r8,8), %rcx
	movq	%rdx, 96(%rsp)
	imulq	$120, %r12, %rdx
	addq	%rdi, 96(%rsp)
	addq	%rdi, 88(%rsp)
	movq	%r14, 208(%rsp)
	movq	%rcx, 504(%rsp)
	leaq	(%rdi,%r8,4), %rcx
	shlq	$4, %r8
	addq	%rdi, %rdx
	addq	%rdi, %r8
	movq	%rcx, 496(%rsp)
	leaq	-1(%rbx), %rcx
	movq	%rdx, 480(%rsp)
	imulq	$76, %r12, %rdx
	movq	72(%rsp), %rbx
	movq	%r8, 488(%rsp)
	imulq	%r12, %rcx
	addq	%rdi, %rdx
	leaq	(%rdi,%rcx,4), %rcx
	movq	%rdx, 392(%rsp)
	leaq	(%r12,%r12,8), %rdx
	movq	%rcx, 200(%rsp)
	imulq	$124, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 472(%rsp)
	imulq	$116, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 464(%rsp)
	imulq	$112, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 456(%rsp)
	imulq	$108, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 448(%rsp)
	imulq	$104, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 440(%rsp)
	imulq	$100, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 432(%rsp)
	imulq	$92, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 424(%rsp)
	imulq	$88, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 416(%rsp)
	imulq	$84, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 408(%rsp)
	leaq	(%r15,%r12,4), %rcx
	addq	%rdi, %r15
	movq	%r15, 512(%rsp)
	addq	%rdi, %rcx
	movq	%rcx, 400(%rsp)
	imulq	$60, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 384(%rsp)
	imulq	$56, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 376(%rsp)
	imulq	$52, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 368(%rsp)
	imulq	$44, %r12, %rcx
	addq	%rdi, %rcx
	movq	%rcx, 360(%rsp)
	leaq	(%rdi,%rdx,8), %rcx
	movq	%rcx, 352(%rsp)
	leaq	(%rdi,%rdx,4), %rcx
	movq	%rcx, 344(%rsp)
	leaq	(,%r12,8), %rcx
	movq	%rcx, 112(%rsp)
	leaq	(%rcx,%rcx,2), %rcx
	leaq	(%r11,%rcx), %rdx
	leaq	(%r10,%rcx), %r15
	leaq	(%rsi,%rcx), %r8
	addq	%rdi, %rcx
	movq	%rcx, 336(%rsp)
	leaq	(%r11,%rbx), %rcx
	movq	%rdx, 592(%rsp)
	movq	%r8, 576(%rsp)
	movq	848(%rsp), %r8
	movq	832(%rsp), %rdx
	movq	%r15, 584(%rsp)
	leaq	(%rdi,%r12,8), %r15
	movq	%rcx, 568(%rsp)
	leaq	(%r10,%rbx), %rcx
	movq	%rcx, 560(%rsp)
	leaq	(%rsi,%rbx), %rcx
	addq	%rdi, %rbx
	movq	%r15, 328(%rsp)
	movq	$-2, %r15
	movq	%rcx, 552(%rsp)
	movq	%rbx, 72(%rsp)
	movq	712(%rsp), %rcx
	leaq	(%r11,%r12,8), %rbx
	movq	%rbx, 544(%rsp)
	leaq	(%r10,%r12,8), %rbx
	movq	%rbx, 536(%rsp)
	leaq	(%rsi,%r12,8), %rbx
	movq	%rcx, 8(%rsp)
	leaq	(,%r12,4), %rcx
	movq	%rbx, 528(%rsp)
	movq	656(%rsp), %rbx
	movq	%rcx, 520(%rsp)
	addq	%rdi, %rcx
	xorl	%edi, %edi
	movq	%rcx, 320(%rsp)
	leaq	24(%rsi), %rcx
	movq	%rcx, 280(%rsp)
	leaq	24(%r10), %rcx
	movq	%rcx, 272(%rsp)
	leaq	24(%r11), %rcx
	movq	%rbx, (%rsp)
	movq	%rcx, 264(%rsp)
	movq	%r9, %rbx
	xorl	%ecx, %ecx
	jmp	.LBB0_18
	.p2align	4
.LBB0_17:
	movq	16(%rsp), %rdi
	movq	232(%rsp), %rcx
	movq	112(%rsp), %rax
	subq	%r12, %rbx
	addq	%r12, %rdi
	incq	%rcx
	addq	%rax, 8(%rsp)
	addq	%rax, (%rsp)
	leaq	-1(%rdx), %rax
	cmpq	$1, %rdx
	movq	832(%rsp), %rdx
	jle	.LBB0_75
.LBB0_18:
	cmpq	%rbx, %r12
	movq	%rdi, 16(%rsp)
	movq	%rbx, %rdi
	movq	%rcx, %rcx
	movq	%r12, %r13
	movq	%r9, %r14
	movq	%rcx, 232(%rsp)
	movq	%rax, 248(%rsp)
	movq	%rbx, 240(%rsp)
	cmovlq	%r12, %rdi
	imulq	%rcx, %r13
	movq	%r9, %rcx
	movq	%rdi, 64(%rsp)
	movq	16(%rsp), %rdi
	subq	%r13, %r14
	cmpq	%r14, %r12
	cmovlq	%r12, %r14
	subq	%rdi, %rcx
	movq	%r14, 32(%rsp)
	cmpq	%r12, %rcx
	cmovlq	%rcx, %r12
	movq	%r12, 128(%rsp)
	testq	%rcx, %rcx
	jle	.LBB0_49
	xorl	%r13d, %r13d
	jmp	.LBB0_22
	.p2align	4
.LBB0_20:
	movq	(%rsp), %rcx
	movq	-16(%rcx,%r13,8), %rcx
.LBB0_21:
	movq	848(%rsp), %r8
	movq	832(%rsp), %rdx
	testq	%rcx, %rcx
	movq	584(%rsp), %rbx
	cmovsq	792(%rsp), %rcx
	imulq	16(%rdx,%r8,8), %rcx
	xorq	%rax, %rcx
	movq	%rcx, %rax
	shrq	$42, %rax
	vcvtsi2sd	%eax, %xmm15, %xmm1
	movq	%rcx, %rax
	andl	$2097151, %ecx
	shrq	$21, %rax
	vcvtsi2sd	%ecx, %xmm15, %xmm3
	movq	576(%rsp), %rcx
	andl	$2097151, %eax
	vcvtsi2sd	%eax, %xmm15, %xmm2
	vmovsd	%xmm1, (%rcx,%r13,8)
	movq	592(%rsp), %rcx
	vmovsd	%xmm2, (%rbx,%r13,8)
	vmovsd	%xmm3, (%rcx,%r13,8)
	incq	%r13
	cmpq	%r13, 64(%rsp)
	je	.LBB0_49
.LBB0_22:
	movq	776(%rsp), %rax
	movq	136(%rsp), %rbx
	leaq	(%rdi,%r13), %r12
	cmpq	%rax, %rbx
	jge	.LBB0_26
	movq	%rbx, %rdx
	sarq	$63, %rdx
	movq	%r12, %rcx
	andq	%rax, %rdx
	movq	768(%rsp), %rax
	leaq	(%rax,%rbx,8), %rdi
	xorl	%eax, %eax
	cmpq	(%rdi,%rdx,8), %r12
	sete	%dl
	je	.LBB0_25
	movq	%r15, %rcx
.LBB0_25:
	movb	%dl, %al
	movq	832(%rsp), %rdx
	movq	16(%rsp), %rdi
	movq	%rcx, %r15
	addq	%rax, %rbx
	movq	%rbx, 136(%rsp)
.LBB0_26:
	movq	(%rsp), %rcx
	movq	%r12, %r14
	sarq	$63, %r14
	movq	%r14, %rax
	andq	%r9, %rax
	leaq	(%rcx,%rax,8), %rax
	movq	792(%rsp), %rcx
	movq	(%rax,%r13,8), %rax
	shrq	$63, %rax
	movb	%al, (%rbp,%r13)
	cmpq	%r15, %r12
	jl	.LBB0_30
	testq	%r12, %r12
	js	.LBB0_29
	movq	(%rsp), %rax
	movq	(%rax,%r13,8), %rcx
	jmp	.LBB0_30
.LBB0_29:
	cmpq	$-2, %r12
	movl	$0, %eax
	movq	8(%rsp), %rcx
	cmovbq	720(%rsp), %rax
	leaq	(%rcx,%rax,8), %rax
	movq	16(%rax,%r13,8), %rcx
	.p2align	4
.LBB0_30:
	movq	792(%rsp), %rax
	testq	%rcx, %rcx
	cmovsq	%rax, %rcx
	imulq	(%rdx), %rcx
	cmpq	%r15, %r12
	jle	.LBB0_34
	testq	%r12, %r12
	jle	.LBB0_33
	movq	(%rsp), %rax
	movq	-8(%rax,%r13,8), %rax
	jmp	.LBB0_34
.LBB0_33:
	cmpq	$-1, %r12
	movl	$0, %eax
	movq	8(%rsp), %rdi
	cmovlq	720(%rsp), %rax
	leaq	(%rdi,%rax,8), %rax
	movq	16(%rsp), %rdi
	movq	8(%rax,%r13,8), %rax
	.p2align	4
.LBB0_34:
	movq	792(%rsp), %rbx
	testq	%rax, %rax
	leaq	-2(%rdi,%r13), %rdi
	cmovsq	%rbx, %rax
	imulq	8(%rdx), %rax
	xorq	%rcx, %rax
	movq	%rax, %rcx
	shrq	$42, %rcx
	vcvtsi2sd	%ecx, %xmm15, %xmm1
	movq	%rax, %rcx
	shrq	$21, %rcx
	andl	$2097151, %ecx
	vcvtsi2sd	%ecx, %xmm15, %xmm2
	movl	%eax, %ecx
	andl	$2097151, %ecx
	vcvtsi2sd	%ecx, %xmm15, %xmm3
	vmovsd	%xmm1, (%rsi,%r13,8)
	movq	%rbx, %rcx
	vmovsd	%xmm2, (%r10,%r13,8)
	vmovsd	%xmm3, (%r11,%r13,8)
	cmpq	%r15, %rdi
	jl	.LBB0_38
	cmpq	$1, %r12
	jle	.LBB0_37
	movq	(%rsp), %rcx
	movq	-16(%rcx,%r13,8), %rcx
	jmp	.LBB0_38
	.p2align	4
.LBB0_37:
	movq	%r14, %rcx
	andq	720(%rsp), %rcx
	movq	8(%rsp), %rbx
	leaq	(%rbx,%rcx,8), %rcx
	movq	(%rcx,%r13,8), %rcx
.LBB0_38:
	movq	792(%rsp), %rbx
	testq	%rcx, %rcx
	cmovsq	%rbx, %rcx
	imulq	16(%rdx), %rcx
	xorq	%rax, %rcx
	movq	%rcx, %rax
	movq	%rcx, %rdx
	andl	$2097151, %ecx
	shrq	$42, %rax
	shrq	$21, %rdx
	vcvtsi2sd	%ecx, %xmm15, %xmm3
	movq	528(%rsp), %rcx
	vcvtsi2sd	%eax, %xmm15, %xmm1
	andl	$2097151, %edx
	vcvtsi2sd	%edx, %xmm15, %xmm2
	movq	536(%rsp), %rdx
	vmovsd	%xmm1, (%rcx,%r13,8)
	movq	544(%rsp), %rcx
	vmovsd	%xmm2, (%rdx,%r13,8)
	vmovsd	%xmm3, (%rcx,%r13,8)
	movq	%rbx, %rcx
	cmpq	%r15, %r12
	jl	.LBB0_42
	testq	%r12, %r12
	js	.LBB0_41
	movq	(%rsp), %rax
	movq	(%rax,%r13,8), %rcx
	jmp	.LBB0_42
.LBB0_41:
	cmpq	$-2, %r12
	movl	$0, %eax
	movq	8(%rsp), %rcx
	cmovbq	720(%rsp), %rax
	leaq	(%rcx,%rax,8), %rax
	movq	16(%rax,%r13,8), %rcx
	.p2align	4
.LBB0_42:
	movq	792(%rsp), %rax
	movq	832(%rsp), %rdx
	testq	%rcx, %rcx
	cmovsq	%rax, %rcx
	imulq	(%rdx,%r8,8), %rcx
	cmpq	%r15, %r12
	jle	.LBB0_46
	testq	%r12, %r12
	jle	.LBB0_45
	movq	(%rsp), %rax
	movq	-8(%rax,%r13,8), %rax
	jmp	.LBB0_46
.LBB0_45:
	cmpq	$-1, %r12
	movl	$0, %eax
	movq	8(%rsp), %rbx
	cmovlq	720(%rsp), %rax
	leaq	(%rbx,%rax,8), %rax
	movq	8(%rax,%r13,8), %rax
	.p2align	4
.LBB0_46:
	movq	792(%rsp), %rbx
	testq	%rax, %rax
	cmovsq	%rbx, %rax
	imulq	8(%rdx,%r8,8), %rax
	xorq	%rcx, %rax
	movq	%rax, %rdx
	shrq	$21, %rdx
	movq	%rax, %rcx
	shrq	$42, %rcx
	movl	%eax, %r8d
	andl	$2097151, %r8d
	andl	$2097151, %edx
	vcvtsi2sd	%ecx, %xmm15, %xmm1
	vcvtsi2sd	%r8d, %xmm15, %xmm3
	movq	560(%rsp), %r8
	movq	%rbx, %rcx
	vcvtsi2sd	%edx, %xmm15, %xmm2
	movq	552(%rsp), %rdx
	vmovsd	%xmm1, (%rdx,%r13,8)
	movq	568(%rsp), %rdx
	vmovsd	%xmm2, (%r8,%r13,8)
	vmovsd	%xmm3, (%rdx,%r13,8)
	cmpq	%r15, %rdi
	movq	16(%rsp), %rdi
	jl	.LBB0_21
	cmpq	$1, %r12
	jg	.LBB0_20
	andq	720(%rsp), %r14
	movq	8(%rsp), %rcx
	leaq	(%rcx,%r14,8), %rcx
	movq	(%rcx,%r13,8), %rcx
	jmp	.LBB0_21
	.p2align	4
.LBB0_49:
	cmpq	$0, 120(%rsp)
	jne	.LBB0_55
.LBB0_50:
	movq	1336(%rsp), %rax
	movq	1256(%rsp), %r12
	movq	224(%rsp), %r13
	movq	216(%rsp), %rbp
	movq	664(%rsp), %r9
	movq	248(%rsp), %rdx
	movq	208(%rsp), %r14
	movq	848(%rsp), %r8
	movq	240(%rsp), %rbx
	testb	$4, %al
	sete	%al
	cmpq	$0, 128(%rsp)
	setle	%cl
	orb	%al, %cl
	jne	.LBB0_17
	xorl	%edi, %edi
	jmp	.LBB0_53
	.p2align	4
.LBB0_54:
	movq	%rax, %r8
	sarq	$63, %r8
	andq	1304(%rsp), %r8
	movq	1296(%rsp), %rcx
	addq	%rax, %r8
	movq	56(%rsp), %rax
	imulq	1312(%rsp), %r8
	movl	(%rax,%rdi,4), %eax
	movl	%eax, (%rcx,%r8,4)
	movq	320(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 4(%rcx,%r8,4)
	movq	328(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 8(%rcx,%r8,4)
	movl	(%r14,%rdi,4), %eax
	movl	%eax, 12(%rcx,%r8,4)
	movq	72(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 16(%rcx,%r8,4)
	movq	496(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 20(%rcx,%r8,4)
	movq	336(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 24(%rcx,%r8,4)
	movq	104(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 28(%rcx,%r8,4)
	movl	(%r13,%rdi,4), %eax
	movl	%eax, 32(%rcx,%r8,4)
	movq	344(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 36(%rcx,%r8,4)
	movq	504(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 40(%rcx,%r8,4)
	movq	360(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 44(%rcx,%r8,4)
	movq	88(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 48(%rcx,%r8,4)
	movq	368(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 52(%rcx,%r8,4)
	movq	376(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 56(%rcx,%r8,4)
	movq	384(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 60(%rcx,%r8,4)
	movq	512(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 64(%rcx,%r8,4)
	movq	400(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 68(%rcx,%r8,4)
	movq	352(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 72(%rcx,%r8,4)
	movq	392(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 76(%rcx,%r8,4)
	movq	488(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 80(%rcx,%r8,4)
	movq	408(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 84(%rcx,%r8,4)
	movq	416(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 88(%rcx,%r8,4)
	movq	424(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 92(%rcx,%r8,4)
	movq	96(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 96(%rcx,%r8,4)
	movq	432(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 100(%rcx,%r8,4)
	movq	440(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 104(%rcx,%r8,4)
	movq	448(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 108(%rcx,%r8,4)
	movq	456(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 112(%rcx,%r8,4)
	movq	464(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 116(%rcx,%r8,4)
	movq	480(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 120(%rcx,%r8,4)
	movq	472(%rsp), %rax
	movl	(%rax,%rdi,4), %eax
	movl	%eax, 124(%rcx,%r8,4)
	movq	848(%rsp), %r8
	incq	%rdi
	cmpq	%rdi, 64(%rsp)
	je	.LBB0_17
.LBB0_53:
	movq	16(%rsp), %rax
	cmpb	$0, (%rbp,%rdi)
	leaq	(%rax,%rdi), %rax
	je	.LBB0_54
	movq	%rax, %rcx
	sarq	$63, %rcx
	andq	1304(%rsp), %rcx
	addq	%rax, %rcx
	imulq	1312(%rsp), %rcx
	movq	1296(%rsp), %rax
	vmovups	%ymm0, 96(%rax,%rcx,4)
	vmovups	%ymm0, 64(%rax,%rcx,4)
	vmovups	%ymm0, 32(%rax,%rcx,4)
	vmovups	%ymm0, (%rax,%rcx,4)
	incq	%rdi
	cmpq	%rdi, 64(%rsp)
	jne	.LBB0_53
	jmp	.LBB0_17
	.p2align	4
.LBB0_55:
	movq	200(%rsp), %rax
	movq	32(%rsp), %rcx
	movq	64(%rsp), %r12
	movq	56(%rsp), %r14
	xorl	%ebp, %ebp
	movq	%r15, 80(%rsp)
	leaq	(%rax,%rcx,4), %rax
	movl	%r12d, %r13d
	andl	$3, %r13d
	andq	$-4, %r12
	movq	%rax, 312(%rsp)
	leaq	(,%rcx,8), %rax
	andq	$-4, %rcx
	movq	%rcx, 256(%rsp)
	leaq	(%rsi,%rax), %rdx
	leaq	(%r10,%rax), %rdi
	addq	%r11, %rax
	movq	%rdx, 296(%rsp)
	movq	%rdi, 288(%rsp)
	movq	%rax, 304(%rsp)
	jmp	.LBB0_57
	.p2align	4
.LBB0_56:
	addq	520(%rsp), %r14
	incq	%rbp
	cmpq	120(%rsp), %rbp
	je	.LBB0_50
.LBB0_57:
	cmpq	$0, 128(%rsp)
	jle	.LBB0_56
	movq	960(%rsp), %rdx
	movq	1016(%rsp), %rcx
	movq	904(%rsp), %rax
	movq	%rbp, %rdi
	shrq	$3, %rdi
	imulq	112(%rsp), %rdi
	cmpq	$4, 32(%rsp)
	vmovsd	(%rdx,%rbp,8), %xmm2
	vmovsd	(%rcx,%rbp,8), %xmm3
	movq	1072(%rsp), %rdx
	movq	1128(%rsp), %rcx
	vmovsd	(%rax,%rbp,8), %xmm1
	vmovsd	(%rdx,%rbp,8), %xmm4
	vmovsd	(%rcx,%rbp,8), %xmm5
	jae	.LBB0_67
.LBB0_59:
	xorl	%r8d, %r8d
.LBB0_60:
	testb	$3, 32(%rsp)
	movq	%r8, %rax
	je	.LBB0_64
	leaq	(%rdi,%r8,8), %rcx
	xorl	%eax, %eax
	leaq	(%rsi,%rcx), %r9
	leaq	(%r10,%rcx), %rbx
	addq	%r11, %rcx
	leaq	(%r14,%r8,4), %r11
	.p2align	4
.LBB0_62:
	vmulsd	(%rbx,%rax,8), %xmm2, %xmm6
	vfmadd231sd	(%r9,%rax,8), %xmm1, %xmm6
	vaddsd	(%rcx,%rax,8), %xmm6, %xmm6
	vmulsd	%xmm6, %xmm4, %xmm7
	vroundsd	$9, %xmm7, %xmm7, %xmm7
	vfnmadd213sd	%xmm6, %xmm3, %xmm7
	vsubsd	%xmm3, %xmm7, %xmm6
	vcmplesd	%xmm7, %xmm3, %xmm8
	vblendvpd	%xmm8, %xmm6, %xmm7, %xmm6
	vaddsd	%xmm6, %xmm5, %xmm6
	vcvttsd2si	%xmm6, %edx
	movl	%edx, (%r11,%rax,4)
	incq	%rax
	cmpq	%rax, %r13
	jne	.LBB0_62
	movq	24(%rsp), %r11
	addq	%r8, %rax
.LBB0_64:
	subq	32(%rsp), %r8
	cmpq	$-4, %r8
	ja	.LBB0_56
	movq	280(%rsp), %rcx
	movq	272(%rsp), %rdx
	leaq	(%rdi,%rax,8), %rdi
	movq	64(%rsp), %r8
	leaq	(%rcx,%rdi), %rbx
	leaq	(%rdx,%rdi), %r9
	addq	264(%rsp), %rdi
	subq	%rax, %r8
	leaq	(%r14,%rax,4), %rcx
	xorl	%eax, %eax
	.p2align	4
.LBB0_66:
	vmulsd	-24(%r9,%rax,8), %xmm2, %xmm6
	vfmadd231sd	-24(%rbx,%rax,8), %xmm1, %xmm6
	vaddsd	-24(%rdi,%rax,8), %xmm6, %xmm6
	vmulsd	%xmm6, %xmm4, %xmm7
	vroundsd	$9, %xmm7, %xmm7, %xmm7
	vfnmadd213sd	%xmm6, %xmm3, %xmm7
	vsubsd	%xmm3, %xmm7, %xmm6
	vcmplesd	%xmm7, %xmm3, %xmm8
	vblendvpd	%xmm8, %xmm6, %xmm7, %xmm6
	vaddsd	%xmm6, %xmm5, %xmm6
	vcvttsd2si	%xmm6, %edx
	movl	%edx, (%rcx,%rax,4)
	vmulsd	-16(%r9,%rax,8), %xmm2, %xmm6
	vfmadd231sd	-16(%rbx,%rax,8), %xmm1, %xmm6
	vaddsd	-16(%rdi,%rax,8), %xmm6, %xmm6
	vmulsd	%xmm6, %xmm4, %xmm7
	vroundsd	$9, %xmm7, %xmm7, %xmm7
	vfnmadd213sd	%xmm6, %xmm3, %xmm7
	vsubsd	%xmm3, %xmm7, %xmm6
	vcmplesd	%xmm7, %xmm3, %xmm8
	vblendvpd	%xmm8, %xmm6, %xmm7, %xmm6
	vaddsd	%xmm6, %xmm5, %xmm6
	vcvttsd2si	%xmm6, %edx
	movl	%edx, 4(%rcx,%rax,4)
	vmulsd	-8(%r9,%rax,8), %xmm2, %xmm6
	vfmadd231sd	-8(%rbx,%rax,8), %xmm1, %xmm6
	vaddsd	-8(%rdi,%rax,8), %xmm6, %xmm6
	vmulsd	%xmm6, %xmm4, %xmm7
	vroundsd	$9, %xmm7, %xmm7, %xmm7
	vfnmadd213sd	%xmm6, %xmm3, %xmm7
	vsubsd	%xmm3, %xmm7, %xmm6
	vcmplesd	%xmm7, %xmm3, %xmm8
	vblendvpd	%xmm8, %xmm6, %xmm7, %xmm6
	vaddsd	%xmm6, %xmm5, %xmm6
	vcvttsd2si	%xmm6, %edx
	movl	%edx, 8(%rcx,%rax,4)
	vmulsd	(%r9,%rax,8), %xmm2, %xmm6
	vfmadd231sd	(%rbx,%rax,8), %xmm1, %xmm6
	vaddsd	(%rdi,%rax,8), %xmm6, %xmm6
	vmulsd	%xmm6, %xmm4, %xmm7
	vroundsd	$9, %xmm7, %xmm7, %xmm7
	vfnmadd213sd	%xmm6, %xmm3, %xmm7
	vsubsd	%xmm3, %xmm7, %xmm6
	vcmplesd	%xmm7, %xmm3, %xmm8
	vblendvpd	%xmm8, %xmm6, %xmm7, %xmm6
	vaddsd	%xmm6, %xmm5, %xmm6
	vcvttsd2si	%xmm6, %edx
	movl	%edx, 12(%rcx,%rax,4)
	addq	$4, %rax
	cmpq	%rax, %r8
	jne	.LBB0_66
	jmp	.LBB0_56
	.p2align	4
.LBB0_67:
	movq	296(%rsp), %rdx
	leaq	(%rsi,%rdi), %rax
	movq	288(%rsp), %r8
	movq	312(%rsp), %r15
	leaq	(%r11,%rdi), %r9
	movq	304(%rsp), %r11
	leaq	(%r10,%rdi), %rcx
	leaq	(%rdx,%rdi), %rsi
	movq	56(%rsp), %rdx
	addq	%rdi, %r8
	addq	%rdi, %r11
	cmpq	%rsi, %rdx
	setb	%r10b
	cmpq	%r15, %rax
	setb	%sil
	cmpq	%r8, %rdx
	setb	%r8b
	cmpq	%r15, %rcx
	setb	%bl
	cmpq	%r11, %rdx
	setb	%r11b
	cmpq	%r15, %r9
	setb	%dl
	testb	%sil, %r10b
	jne	.LBB0_73
	movq	80(%rsp), %r15
	andb	%bl, %r8b
	jne	.LBB0_74
	andb	%dl, %r11b
	movq	48(%rsp), %rsi
	movq	40(%rsp), %r10
	movq	24(%rsp), %r11
	movl	$0, %r8d
	jne	.LBB0_60
	vbroadcastsd	%xmm1, %ymm6
	vbroadcastsd	%xmm2, %ymm7
	vbroadcastsd	%xmm4, %ymm8
	vbroadcastsd	%xmm3, %ymm9
	vbroadcastsd	%xmm5, %ymm10
	xorl	%r8d, %r8d
	.p2align	4
.LBB0_71:
	vmulpd	(%rcx,%r8,8), %ymm7, %ymm11
	vfmadd231pd	(%rax,%r8,8), %ymm6, %ymm11
	vaddpd	(%r9,%r8,8), %ymm11, %ymm11
	vmulpd	%ymm11, %ymm8, %ymm12
	vroundpd	$9, %ymm12, %ymm12
	vfnmadd213pd	%ymm11, %ymm9, %ymm12
	vsubpd	%ymm9, %ymm12, %ymm13
	vcmplepd	%ymm12, %ymm9, %ymm11
	vblendvpd	%ymm11, %ymm13, %ymm12, %ymm11
	vaddpd	%ymm11, %ymm10, %ymm11
	vcvttpd2dq	%ymm11, %xmm11
	vmovupd	%xmm11, (%r14,%r8,4)
	addq	$4, %r8
	cmpq	%r8, %r12
	jne	.LBB0_71
	movq	256(%rsp), %rax
	movq	%rax, %r8
	cmpq	%rax, 32(%rsp)
	je	.LBB0_56
	jmp	.LBB0_60
.LBB0_73:
	movq	48(%rsp), %rsi
	movq	40(%rsp), %r10
	movq	24(%rsp), %r11
	movq	80(%rsp), %r15
	jmp	.LBB0_59
.LBB0_74:
	movq	48(%rsp), %rsi
	movq	40(%rsp), %r10
	movq	24(%rsp), %r11
	jmp	.LBB0_59
.LBB0_75:
	movq	872(%rsp), %rdi
	movabsq	$NRT_decref, %rbx
	vzeroupper
	callq	*%rbx
	movq	928(%rsp), %rdi
	callq	*%rbx
	movq	736(%rsp), %rdi
	callq	*%rbx
	movq	984(%rsp), %rdi
	callq	*%rbx
	movq	1264(%rsp), %rdi
	callq	*%rbx
	movq	1096(%rsp), %rdi
	callq	*%rbx
	movq	800(%rsp), %rdi
	callq	*%rbx
	movq	144(%rsp), %rdi
	callq	*%rbx
	movq	1040(%rsp), %rdi
	callq	*%rbx
	movq	184(%rsp), %rdi
	callq	*%rbx
	movq	680(%rsp), %rdi
	callq	*%rbx
	movq	160(%rsp), %rdi
	callq	*%rbx
	movq	168(%rsp), %rdi
	callq	*%rbx
	movq	176(%rsp), %rdi
	callq	*%rbx
	movq	152(%rsp), %rdi
	callq	*%rbx
	movq	192(%rsp), %rax
	movq	$0, (%rax)
	xorl	%eax, %eax
.LBB0_76:
	addq	$600, %rsp
	.cfi_def_cfa_offset 56
	popq	%rbx
	.cfi_def_cfa_offset 48
	popq	%r12
	.cfi_def_cfa_offset 40
	popq	%r13
	.cfi_def_cfa_offset 32
	popq	%r14
	.cfi_def_cfa_offset 24
	popq	%r15
	.cfi_def_cfa_offset 16
	popq	%rbp
	.cfi_def_cfa_offset 8
	retq
.LBB0_77:
	.cfi_def_cfa_offset 656
	movabsq	$.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209, %rax
	jmp	.LBB0_83
.LBB0_78:
	movabsq	$.const.picklebuf.331b8563bdb9dac81b38422273052c486fc1706b, %rax
	jmp	.LBB0_83
.LBB0_79:
	movabsq	$.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209.15, %rcx
.LBB0_80:
	movq	(%rsp), %rax
	movq	%rcx, (%rax)
	movl	$1, %eax
	jmp	.LBB0_76
.LBB0_81:
	movabsq	$.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209.24, %rax
	jmp	.LBB0_83
.LBB0_82:
	movabsq	$.const.picklebuf.ca8efb3a72d614fe872032cce3ac326007a30727, %rax
.LBB0_83:
	movq	(%rsp), %rcx
	movq	%rax, (%rcx)
	movl	$1, %eax
	jmp	.LBB0_76
.Lfunc_end0:
	.size	_ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx, .Lfunc_end0-_ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx
	.cfi_endproc

	.globl	_ZN7cpython8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx
	.p2align	4
	.type	_ZN7cpython8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx,@function
_ZN7cpython8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	pushq	%r15
	.cfi_def_cfa_offset 24
	pushq	%r14
	.cfi_def_cfa_offset 32
	pushq	%r13
	.cfi_def_cfa_offset 40
	pushq	%r12
	.cfi_def_cfa_offset 48
	pushq	%rbx
	.cfi_def_cfa_offset 56
	subq	$1016, %rsp
	.cfi_def_cfa_offset 1072
	.cfi_offset %rbx, -56
	.cfi_offset %r12, -48
	.cfi_offset %r13, -40
	.cfi_offset %r14, -32
	.cfi_offset %r15, -24
	.cfi_offset %rbp, -16
	leaq	224(%rsp), %rbp
	movq	%rsi, %rdi
	xorl	%ebx, %ebx
	leaq	232(%rsp), %r15
	leaq	240(%rsp), %r14
	leaq	248(%rsp), %r11
	movl	$16, %edx
	movl	$16, %ecx
	leaq	320(%rsp), %r10
	leaq	328(%rsp), %r12
	movabsq	$.const._v2, %rsi
	movabsq	$PyArg_UnpackTuple, %r13
	leaq	344(%rsp), %r8
	leaq	336(%rsp), %r9
	xorl	%eax, %eax
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	pushq	%r15
	.cfi_adjust_cfa_offset 8
	pushq	%r14
	.cfi_adjust_cfa_offset 8
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	leaq	288(%rsp), %r11
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	leaq	304(%rsp), %r11
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	leaq	320(%rsp), %r11
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	leaq	336(%rsp), %r11
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	leaq	352(%rsp), %r11
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	leaq	368(%rsp), %r11
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	leaq	384(%rsp), %r11
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	leaq	400(%rsp), %r11
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	pushq	%r10
	.cfi_adjust_cfa_offset 8
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	callq	*%r13
	addq	$112, %rsp
	.cfi_adjust_cfa_offset -112
	vxorps	%xmm0, %xmm0, %xmm0
	vmovups	%ymm0, 768(%rsp)
	vmovups	%ymm0, 704(%rsp)
	vmovups	%ymm0, 640(%rsp)
	vmovups	%ymm0, 576(%rsp)
	vmovups	%ymm0, 512(%rsp)
	vmovups	%ymm0, 432(%rsp)
	vmovups	%ymm0, 464(%rsp)
	movq	$0, 496(%rsp)
	vmovups	%ymm0, 792(%rsp)
	vmovups	%ymm0, 728(%rsp)
	vmovups	%ymm0, 664(%rsp)
	vmovups	%ymm0, 600(%rsp)
	vmovups	%ymm0, 536(%rsp)
	vmovups	%ymm0, 384(%rsp)
	vmovups	%ymm0, 352(%rsp)
	movq	$0, 416(%rsp)
	movq	$0, 216(%rsp)
	movq	$0, 112(%rsp)
	testl	%eax, %eax
	je	.LBB1_115
	movabsq	$_ZN08NumbaEnv8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx, %rax
	cmpq	$0, (%rax)
	je	.LBB1_2
	movq	344(%rsp), %rdi
	movabsq	$NRT_adapt_ndarray_from_python, %rax
	leaq	960(%rsp), %rsi
	vmovups	%ymm0, 960(%rsp)
	vmovups	%ymm0, 984(%rsp)
	vzeroupper
	callq	*%rax
	testl	%eax, %eax
	jne	.LBB1_6
	cmpq	$8, 984(%rsp)
	jne	.LBB1_6
	movq	336(%rsp), %rdi
	movq	960(%rsp), %r15
	movq	992(%rsp), %r13
	movq	1000(%rsp), %rbx
	leaq	896(%rsp), %rsi
	movabsq	$NRT_adapt_ndarray_from_python, %rax
	vxorps	%xmm0, %xmm0, %xmm0
	vmovups	%ymm0, 896(%rsp)
	vmovups	%ymm0, 920(%rsp)
	vzeroupper
	callq	*%rax
	testl	%eax, %eax
	jne	.LBB1_9
	cmpq	$8, 920(%rsp)
	jne	.LBB1_9
	movq	896(%rsp), %rax
	movq	328(%rsp), %rdi
	movq	928(%rsp), %r12
	movq	936(%rsp), %rbp
	leaq	832(%rsp), %rsi
	vxorps	%xmm0, %xmm0, %xmm0
	vmovups	%ymm0, 832(%rsp)
	movq	%r15, 104(%rsp)
	vmovups	%ymm0, 856(%rsp)
	movq	%rax, 96(%rsp)
	movabsq	$NRT_adapt_ndarray_from_python, %rax
	vzeroupper
	callq	*%rax
	testl	%eax, %eax
	jne	.LBB1_14
	cmpq	$8, 856(%rsp)
	jne	.LBB1_14
	movq	864(%rsp), %rax
	movq	872(%rsp), %rcx
	movq	320(%rsp), %rdi
	movq	%r12, 208(%rsp)
	movq	832(%rsp), %r12
	movq	%rbp, 32(%rsp)
	movabsq	$PyNumber_Long, %rbp
	movq	%rbx, 48(%rsp)
	movq	%rax, 200(%rsp)
	movq	%rcx, 192(%rsp)
	callq	*%rbp
	movq	%rax, %rbx
	movabsq	$PyLong_AsLongLong, %rax
	movabsq	$Py_DecRef, %r15
	testq	%rbx, %rbx
	je	.LBB1_16
	movq	%rbx, %rdi
	movq	%rax, %r14
	callq	*%rax
	movq	%rbx, %rdi
	movq	%rax, 24(%rsp)
	callq	*%r15
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_17
.LBB1_21:
	movq	312(%rsp), %rdi
	leaq	432(%rsp), %rsi
	movabsq	$NRT_adapt_ndarray_from_python, %rax
	vxorps	%xmm0, %xmm0, %xmm0
	vmovups	%ymm0, 432(%rsp)
	vmovups	%ymm0, 464(%rsp)
	movq	$0, 496(%rsp)
	vzeroupper
	callq	*%rax
	cmpq	$8, 456(%rsp)
	setne	%cl
	testl	%eax, %eax
	setne	%bl
	orb	%cl, %bl
	cmpb	$1, %bl
	je	.LBB1_22
	testb	%bl, %bl
	jne	.LBB1_17
.LBB1_24:
	movq	480(%rsp), %rax
	movq	304(%rsp), %rdi
	movq	432(%rsp), %rbx
	movq	464(%rsp), %r15
	leaq	768(%rsp), %rsi
	vxorps	%xmm0, %xmm0, %xmm0
	vmovups	%ymm0, 768(%rsp)
	vmovups	%ymm0, 792(%rsp)
	movq	%rax, 184(%rsp)
	movabsq	$NRT_adapt_ndarray_from_python, %rax
	vzeroupper
	callq	*%rax
	testl	%eax, %eax
	jne	.LBB1_26
	cmpq	$8, 792(%rsp)
	jne	.LBB1_26
	movq	768(%rsp), %rax
	movq	800(%rsp), %rcx
	movq	296(%rsp), %rdi
	leaq	704(%rsp), %rsi
	vxorps	%xmm0, %xmm0, %xmm0
	vmovups	%ymm0, 704(%rsp)
	vmovups	%ymm0, 728(%rsp)
	movq	%rax, 16(%rsp)
	movabsq	$NRT_adapt_ndarray_from_python, %rax
	movq	%rcx, 176(%rsp)
	vzeroupper
	callq	*%rax
	testl	%eax, %eax
	jne	.LBB1_29
	cmpq	$8, 728(%rsp)
	jne	.LBB1_29
	movq	704(%rsp), %rax
	movq	736(%rsp), %rcx
	movq	288(%rsp), %rdi
	leaq	640(%rsp), %rsi
	vxorps	%xmm0, %xmm0, %xmm0
	vmovups	%ymm0, 640(%rsp)
	vmovups	%ymm0, 664(%rsp)
	movq	%rax, 72(%rsp)
	movabsq	$NRT_adapt_ndarray_from_python, %rax
	movq	%rcx, 168(%rsp)
	vzeroupper
	callq	*%rax
	testl	%eax, %eax
	jne	.LBB1_34
	cmpq	$8, 664(%rsp)
	jne	.LBB1_34
	movq	640(%rsp), %rax
	movq	672(%rsp), %rcx
	movq	280(%rsp), %rdi
	leaq	576(%rsp), %rsi
	vxorps	%xmm0, %xmm0, %xmm0
	vmovups	%ymm0, 576(%rsp)
	vmovups	%ymm0, 600(%rsp)
	movq	%rax, 40(%rsp)
	movabsq	$NRT_adapt_ndarray_from_python, %rax
	movq	%rcx, 160(%rsp)
	vzeroupper
	callq	*%rax
	testl	%eax, %eax
	jne	.LBB1_37
	cmpq	$8, 600(%rsp)
	jne	.LBB1_37
	movq	608(%rsp), %rax
	movq	272(%rsp), %rdi
	movq	%r15, 152(%rsp)
	movq	576(%rsp), %r15
	leaq	512(%rsp), %rsi
	vxorps	%xmm0, %xmm0, %xmm0
	vmovups	%ymm0, 512(%rsp)
	vmovups	%ymm0, 536(%rsp)
	movq	%rax, 144(%rsp)
	movabsq	$NRT_adapt_ndarray_from_python, %rax
	vzeroupper
	callq	*%rax
	testl	%eax, %eax
	jne	.LBB1_42
	cmpq	$8, 536(%rsp)
	jne	.LBB1_42
	movq	512(%rsp), %rax
	movq	%r12, 88(%rsp)
	movq	544(%rsp), %rcx
	movq	264(%rsp), %r12
	movq	%r15, 64(%rsp)
	movq	%r13, 136(%rsp)
	movq	%rbx, 80(%rsp)
	movq	%rax, 56(%rsp)
	movabsq	$PyTuple_Size, %rax
	movq	%r12, %rdi
	movq	%rcx, 128(%rsp)
	callq	*%rax
	cmpq	$2, %rax
	setne	%r15b
	jne	.LBB1_46
.LBB1_47:
	movabsq	$PyTuple_GetItem, %r13
	movq	%r12, %rdi
	xorl	%esi, %esi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_49
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movabsq	$Py_DecRef, %rax
	movq	%rbx, %rdi
	callq	*%rax
.LBB1_49:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_50
.LBB1_51:
	movl	$1, %esi
	movq	%r12, %rdi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_53
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movabsq	$Py_DecRef, %rax
	movq	%rbx, %rdi
	callq	*%rax
.LBB1_53:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	setne	%al
	orb	%al, %r15b
	jne	.LBB1_110
	movq	256(%rsp), %r12
	movabsq	$PyTuple_Size, %rax
	movq	%r12, %rdi
	callq	*%rax
	cmpq	$3, %rax
	setne	%r15b
	jne	.LBB1_55
.LBB1_56:
	movq	%r12, %rdi
	xorl	%esi, %esi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_58
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movabsq	$Py_DecRef, %rax
	movq	%rbx, %rdi
	callq	*%rax
.LBB1_58:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_59
.LBB1_60:
	movl	$1, %esi
	movq	%r12, %rdi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_62
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movabsq	$Py_DecRef, %rax
	movq	%rbx, %rdi
	callq	*%rax
.LBB1_62:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_63
.LBB1_64:
	movl	$2, %esi
	movq	%r12, %rdi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_66
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movabsq	$Py_DecRef, %rax
	movq	%rbx, %rdi
	callq	*%rax
.LBB1_66:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	setne	%al
	orb	%al, %r15b
	movabsq	$Py_DecRef, %r15
	jne	.LBB1_110
	movq	248(%rsp), %r12
	movabsq	$PyTuple_Size, %rax
	movq	%r12, %rdi
	callq	*%rax
	cmpq	$8, %rax
	setne	8(%rsp)
	jne	.LBB1_68
.LBB1_69:
	movq	%r12, %rdi
	xorl	%esi, %esi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_71
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movq	%rbx, %rdi
	callq	*%r15
.LBB1_71:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_72
.LBB1_73:
	movl	$1, %esi
	movq	%r12, %rdi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_75
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movq	%rbx, %rdi
	callq	*%r15
.LBB1_75:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_76
.LBB1_77:
	movl	$2, %esi
	movq	%r12, %rdi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_79
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movq	%rbx, %rdi
	callq	*%r15
.LBB1_79:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_80
.LBB1_81:
	movl	$3, %esi
	movq	%r12, %rdi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_83
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movq	%rbx, %rdi
	callq	*%r15
.LBB1_83:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_84
.LBB1_85:
	movl	$4, %esi
	movq	%r12, %rdi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_87
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movq	%rbx, %rdi
	callq	*%r15
.LBB1_87:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_88
.LBB1_89:
	movl	$5, %esi
	movq	%r12, %rdi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_91
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movq	%rbx, %rdi
	callq	*%r15
.LBB1_91:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_92
.LBB1_93:
	movl	$6, %esi
	movq	%r12, %rdi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_95
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movq	%rbx, %rdi
	callq	*%r15
.LBB1_95:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_96
.LBB1_97:
	movl	$7, %esi
	movq	%r12, %rdi
	callq	*%r13
	movq	%rax, %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_99
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movq	%rbx, %rdi
	callq	*%r15
.LBB1_99:
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	setne	%al
	orb	%al, 8(%rsp)
	jne	.LBB1_110
	movq	240(%rsp), %rdi
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_101
	movq	%rax, %rdi
	movq	%rax, %rbx
	callq	*%r14
	movq	%rbx, %rdi
	movq	%rax, %r12
	callq	*%r15
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_110
.LBB1_104:
	movq	232(%rsp), %rdi
	leaq	352(%rsp), %rsi
	movabsq	$NRT_adapt_ndarray_from_python, %rax
	vxorps	%xmm0, %xmm0, %xmm0
	vmovups	%ymm0, 352(%rsp)
	vmovups	%ymm0, 384(%rsp)
	movq	$0, 416(%rsp)
	vzeroupper
	callq	*%rax
	cmpq	$4, 376(%rsp)
	setne	%cl
	testl	%eax, %eax
	setne	%bl
	orb	%cl, %bl
	cmpb	$1, %bl
	je	.LBB1_105
	testb	%bl, %bl
	jne	.LBB1_110
.LBB1_107:
	movq	352(%rsp), %rax
	movq	224(%rsp), %rdi
	movq	%r14, %rbx
	movq	384(%rsp), %r15
	movq	392(%rsp), %r14
	movq	400(%rsp), %r13
	movq	%r12, 120(%rsp)
	movq	%rax, 8(%rsp)
	callq	*%rbp
	testq	%rax, %rax
	je	.LBB1_108
	movq	%rax, %rdi
	movq	%rax, %rbp
	callq	*%rbx
	movabsq	$Py_DecRef, %r12
	movq	%rbp, %rdi
	movq	%rax, %rbx
	callq	*%r12
.LBB1_112:
	movq	32(%rsp), %r12
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	jne	.LBB1_109
	movabsq	$PyEval_SaveThread, %rax
	callq	*%rax
	movq	%rax, 32(%rsp)
	subq	$688, %rsp
	.cfi_adjust_cfa_offset 688
	movq	816(%rsp), %rsi
	movq	832(%rsp), %rdx
	movq	808(%rsp), %rax
	movq	%rbx, 680(%rsp)
	movq	%r13, 656(%rsp)
	movq	%r15, 640(%rsp)
	movq	%r12, 64(%rsp)
	movq	704(%rsp), %rbx
	movq	768(%rsp), %rbp
	movq	776(%rsp), %r12
	movq	784(%rsp), %r13
	movq	792(%rsp), %r15
	leaq	904(%rsp), %rdi
	movq	%r14, 648(%rsp)
	movq	%rsi, 472(%rsp)
	movq	848(%rsp), %rsi
	movq	%rdx, 416(%rsp)
	movq	856(%rsp), %rdx
	movq	%rax, 600(%rsp)
	movabsq	$_ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx, %rax
	movq	%rbx, 216(%rsp)
	movq	%rbp, 144(%rsp)
	movq	%r12, 80(%rsp)
	movq	%r13, 24(%rsp)
	movq	%rsi, 360(%rsp)
	movq	864(%rsp), %rsi
	movq	%rdx, 304(%rsp)
	movq	872(%rsp), %rdx
	movq	%rsi, 248(%rsp)
	movq	840(%rsp), %rsi
	movq	%rdx, 192(%rsp)
	movq	712(%rsp), %rdx
	movq	%rsi, 176(%rsp)
	movq	880(%rsp), %rsi
	movq	%rdx, 136(%rsp)
	movq	888(%rsp), %rdx
	movq	%rsi, 120(%rsp)
	movq	696(%rsp), %rsi
	movq	%rdx, 112(%rsp)
	movq	744(%rsp), %rdx
	movq	%rsi, 608(%rsp)
	movq	752(%rsp), %rsi
	movq	%rdx, 440(%rsp)
	movq	728(%rsp), %rdx
	movq	%rsi, 384(%rsp)
	movq	760(%rsp), %rsi
	movq	%rdx, 328(%rsp)
	movq	896(%rsp), %rdx
	movq	%rsi, 272(%rsp)
	movq	736(%rsp), %rsi
	movq	%rdx, 56(%rsp)
	movq	824(%rsp), %rdx
	movq	%rsi, 8(%rsp)
	leaq	800(%rsp), %rsi
	movq	%rdx, (%rsp)
	movq	%r15, %rdx
	callq	*%rax
	addq	$688, %rsp
	.cfi_adjust_cfa_offset -688
	movq	112(%rsp), %rcx
	movq	32(%rsp), %rdi
	movl	%eax, 24(%rsp)
	movabsq	$PyEval_RestoreThread, %rax
	movq	%rcx, 48(%rsp)
	callq	*%rax
	movabsq	$NRT_decref, %r14
	movq	%r15, %rdi
	callq	*%r14
	movq	%r13, %rdi
	callq	*%r14
	movq	%r12, %rdi
	callq	*%r14
	movq	%rbp, %rdi
	callq	*%r14
	movq	%rbx, %rdi
	callq	*%r14
	movq	72(%rsp), %rdi
	callq	*%r14
	movq	40(%rsp), %rdi
	callq	*%r14
	movq	64(%rsp), %rdi
	callq	*%r14
	movq	56(%rsp), %rdi
	callq	*%r14
	movq	8(%rsp), %rdi
	callq	*%r14
	cmpl	$0, 24(%rsp)
	jne	.LBB1_116
	movabsq	$_Py_NoneStruct, %rbx
	movabsq	$Py_IncRef, %rax
	movq	%rbx, %rdi
	callq	*%rax
.LBB1_115:
	movq	%rbx, %rax
	addq	$1016, %rsp
	.cfi_def_cfa_offset 56
	popq	%rbx
	.cfi_def_cfa_offset 48
	popq	%r12
	.cfi_def_cfa_offset 40
	popq	%r13
	.cfi_def_cfa_offset 32
	popq	%r14
	.cfi_def_cfa_offset 24
	popq	%r15
	.cfi_def_cfa_offset 16
	popq	%rbp
	.cfi_def_cfa_offset 8
	vzeroupper
	retq
.LBB1_116:
	.cfi_def_cfa_offset 1072
	movabsq	$PyErr_Clear, %rax
	callq	*%rax
	movq	48(%rsp), %r14
	movl	8(%r14), %esi
	movq	(%r14), %rdi
	cmpl	$0, 32(%r14)
	jle	.LBB1_119
	movslq	%esi, %rsi
	movabsq	$PyBytes_FromStringAndSize, %rax
	callq	*%rax
	movq	16(%r14), %rdi
	movq	%rax, %rbx
	callq	*24(%r14)
	testq	%rax, %rax
	je	.LBB1_118
	movabsq	$numba_runtime_build_excinfo_struct, %rcx
	movq	%rbx, %rdi
	movq	%rax, %rsi
	callq	*%rcx
	movabsq	$NRT_Free, %r15
	movq	%r14, %rdi
	movq	%rax, %rbx
	callq	*%r15
	jmp	.LBB1_120
.LBB1_2:
	movabsq	$PyExc_RuntimeError, %rdi
	movabsq	$".const.missing Environment: _ZN08NumbaEnv8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx", %rsi
	jmp	.LBB1_3
.LBB1_6:
	movabsq	$PyExc_TypeError, %rdi
	movabsq	$".const.can't unbox array from PyObject into native value.  The object maybe of a different type", %rsi
.LBB1_3:
	movabsq	$PyErr_SetString, %rax
	vzeroupper
	callq	*%rax
	xorl	%ebx, %ebx
	jmp	.LBB1_115
.LBB1_9:
	movabsq	$PyExc_TypeError, %rdi
	movabsq	$".const.can't unbox array from PyObject into native value.  The object maybe of a different type", %rsi
	movabsq	$PyErr_SetString, %rax
	callq	*%rax
	jmp	.LBB1_10
.LBB1_14:
	movabsq	$PyExc_TypeError, %rdi
	movabsq	$".const.can't unbox array from PyObject into native value.  The object maybe of a different type", %rsi
	movabsq	$PyErr_SetString, %rax
	callq	*%rax
	jmp	.LBB1_18
.LBB1_16:
	movq	%rax, %r14
	movq	$0, 24(%rsp)
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	je	.LBB1_21
	jmp	.LBB1_17
.LBB1_22:
	movabsq	$PyExc_TypeError, %rdi
	movabsq	$".const.can't unbox array from PyObject into native value.  The object maybe of a different type", %rsi
	movabsq	$PyErr_SetString, %rax
	callq	*%rax
	testb	%bl, %bl
	je	.LBB1_24
	jmp	.LBB1_17
.LBB1_26:
	movabsq	$PyExc_TypeError, %rdi
	movabsq	$".const.can't unbox array from PyObject into native value.  The object maybe of a different type", %rsi
	movabsq	$PyErr_SetString, %rax
	callq	*%rax
	jmp	.LBB1_31
.LBB1_29:
	movabsq	$PyExc_TypeError, %rdi
	movabsq	$".const.can't unbox array from PyObject into native value.  The object maybe of a different type", %rsi
	movabsq	$PyErr_SetString, %rax
	callq	*%rax
	movq	16(%rsp), %r13
	jmp	.LBB1_30
.LBB1_34:
	movabsq	$PyExc_TypeError, %rdi
	movabsq	$".const.can't unbox array from PyObject into native value.  The object maybe of a different type", %rsi
	movabsq	$PyErr_SetString, %rax
	callq	*%rax
	movq	16(%rsp), %r13
	jmp	.LBB1_39
.LBB1_37:
	movabsq	$PyExc_TypeError, %rdi
	movabsq	$".const.can't unbox array from PyObject into native value.  The object maybe of a different type", %rsi
	movabsq	$PyErr_SetString, %rax
	callq	*%rax
	jmp	.LBB1_44
.LBB1_42:
	movabsq	$PyExc_TypeError, %rdi
	movabsq	$".const.can't unbox array from PyObject into native value.  The object maybe of a different type", %rsi
	movabsq	$PyErr_SetString, %rax
	callq	*%rax
	jmp	.LBB1_43
.LBB1_46:
	movabsq	$PyExc_ValueError, %rdi
	movabsq	$".const.size mismatch for tuple, expected 2 element(s) but got %zd", %rsi
	movabsq	$PyErr_Format, %rcx
	movq	%rax, %rdx
	xorl	%eax, %eax
	callq	*%rcx
	jmp	.LBB1_47
.LBB1_50:
	movb	$1, %r15b
	jmp	.LBB1_51
.LBB1_55:
	movabsq	$PyExc_ValueError, %rdi
	movabsq	$".const.size mismatch for tuple, expected 3 element(s) but got %zd", %rsi
	movabsq	$PyErr_Format, %rcx
	movq	%rax, %rdx
	xorl	%eax, %eax
	callq	*%rcx
	jmp	.LBB1_56
.LBB1_59:
	movb	$1, %r15b
	jmp	.LBB1_60
.LBB1_63:
	movb	$1, %r15b
	jmp	.LBB1_64
.LBB1_68:
	movabsq	$PyExc_ValueError, %rdi
	movabsq	$".const.size mismatch for tuple, expected 8 element(s) but got %zd", %rsi
	movabsq	$PyErr_Format, %rcx
	movq	%rax, %rdx
	xorl	%eax, %eax
	callq	*%rcx
	jmp	.LBB1_69
.LBB1_72:
	movb	$1, 8(%rsp)
	jmp	.LBB1_73
.LBB1_76:
	movb	$1, 8(%rsp)
	jmp	.LBB1_77
.LBB1_80:
	movb	$1, 8(%rsp)
	jmp	.LBB1_81
.LBB1_84:
	movb	$1, 8(%rsp)
	jmp	.LBB1_85
.LBB1_88:
	movb	$1, 8(%rsp)
	jmp	.LBB1_89
.LBB1_92:
	movb	$1, 8(%rsp)
	jmp	.LBB1_93
.LBB1_96:
	movb	$1, 8(%rsp)
	jmp	.LBB1_97
.LBB1_101:
	xorl	%r12d, %r12d
	movabsq	$PyErr_Occurred, %rax
	callq	*%rax
	testq	%rax, %rax
	je	.LBB1_104
	jmp	.LBB1_110
.LBB1_105:
	movabsq	$PyExc_TypeError, %rdi
	movabsq	$".const.can't unbox array from PyObject into native value.  The object maybe of a different type", %rsi
	movabsq	$PyErr_SetString, %rax
	callq	*%rax
	testb	%bl, %bl
	je	.LBB1_107
	jmp	.LBB1_110
.LBB1_108:
	xorl	%ebx, %ebx
	jmp	.LBB1_112
.LBB1_109:
	movq	8(%rsp), %rdi
	movabsq	$NRT_decref, %rax
	callq	*%rax
.LBB1_110:
	movq	56(%rsp), %rdi
	movabsq	$NRT_decref, %rax
	callq	*%rax
	movq	88(%rsp), %r12
	movq	80(%rsp), %rbx
	movq	64(%rsp), %r15
.LBB1_43:
	movabsq	$NRT_decref, %rax
	movq	%r15, %rdi
	callq	*%rax
.LBB1_44:
	movq	16(%rsp), %r13
	movq	40(%rsp), %rdi
	movabsq	$NRT_decref, %rax
	callq	*%rax
.LBB1_39:
	movq	72(%rsp), %rdi
	movabsq	$NRT_decref, %rax
	callq	*%rax
.LBB1_30:
	movabsq	$NRT_decref, %rax
	movq	%r13, %rdi
	callq	*%rax
.LBB1_31:
	movabsq	$NRT_decref, %rax
	movq	%rbx, %rdi
	callq	*%rax
.LBB1_17:
	movabsq	$NRT_decref, %rax
	movq	%r12, %rdi
	callq	*%rax
.LBB1_18:
	movq	96(%rsp), %rdi
	movabsq	$NRT_decref, %rax
	callq	*%rax
	movq	104(%rsp), %r15
.LBB1_10:
	movabsq	$NRT_decref, %rax
	movq	%r15, %rdi
.LBB1_11:
	callq	*%rax
	xorl	%ebx, %ebx
	jmp	.LBB1_115
.LBB1_119:
	movq	16(%r14), %rdx
	movabsq	$numba_unpickle, %rax
	callq	*%rax
	movq	%rax, %rbx
.LBB1_120:
	testq	%rbx, %rbx
	je	.LBB1_121
	movabsq	$numba_do_raise, %rax
	movq	%rbx, %rdi
	jmp	.LBB1_11
.LBB1_121:
	xorl	%ebx, %ebx
	jmp	.LBB1_115
.LBB1_118:
	movabsq	$PyExc_RuntimeError, %rdi
	movabsq	$".const.Error creating Python tuple from runtime exception arguments", %rsi
	jmp	.LBB1_3
.Lfunc_end1:
	.size	_ZN7cpython8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx, .Lfunc_end1-_ZN7cpython8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx
	.cfi_endproc

	.globl	cfunc._ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx
	.p2align	4
	.type	cfunc._ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx,@function
cfunc._ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	pushq	%r15
	.cfi_def_cfa_offset 24
	pushq	%r14
	.cfi_def_cfa_offset 32
	pushq	%r13
	.cfi_def_cfa_offset 40
	pushq	%r12
	.cfi_def_cfa_offset 48
	pushq	%rbx
	.cfi_def_cfa_offset 56
	subq	$712, %rsp
	.cfi_def_cfa_offset 768
	.cfi_offset %rbx, -56
	.cfi_offset %r12, -48
	.cfi_offset %r13, -40
	.cfi_offset %r14, -32
	.cfi_offset %r15, -24
	.cfi_offset %rbp, -16
	vmovups	1352(%rsp), %xmm3
	vmovaps	1392(%rsp), %xmm4
	movq	1408(%rsp), %rcx
	movq	1432(%rsp), %rax
	movq	1192(%rsp), %rsi
	movq	1224(%rsp), %rdx
	movq	$0, 704(%rsp)
	movq	$0, 696(%rsp)
	vmovaps	864(%rsp), %xmm1
	vmovups	888(%rsp), %xmm2
	vmovups	808(%rsp), %xmm0
	movq	%rdi, %r10
	movq	968(%rsp), %rdi
	movq	1000(%rsp), %r11
	movq	1024(%rsp), %rbx
	movq	1056(%rsp), %r14
	movq	1080(%rsp), %r15
	movq	1112(%rsp), %r12
	movq	1136(%rsp), %r13
	movq	1168(%rsp), %rbp
	movq	%rax, 680(%rsp)
	movq	%rcx, 656(%rsp)
	movabsq	$_ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx, %rax
	vmovups	%xmm4, 640(%rsp)
	vmovups	%xmm3, 600(%rsp)
	movq	%rsi, 440(%rsp)
	movq	944(%rsp), %rsi
	movq	%rdx, 472(%rsp)
	movq	928(%rsp), %rdx
	movq	%rdi, 216(%rsp)
	movq	%rbp, 416(%rsp)
	movq	%r13, 384(%rsp)
	movq	%r12, 360(%rsp)
	movq	%r15, 328(%rsp)
	movq	%r14, 304(%rsp)
	movq	%rbx, 272(%rsp)
	movq	%r11, 248(%rsp)
	leaq	704(%rsp), %rdi
	movq	%rsi, 192(%rsp)
	movq	832(%rsp), %rsi
	movq	%rdx, 176(%rsp)
	movq	776(%rsp), %rdx
	vmovups	%xmm2, 136(%rsp)
	vmovups	%xmm1, 112(%rsp)
	movq	%rsi, 80(%rsp)
	leaq	696(%rsp), %rsi
	vmovups	%xmm0, 56(%rsp)
	movq	%rdx, 24(%rsp)
	movq	%r10, %rdx
	movq	%r9, 8(%rsp)
	movq	%r8, (%rsp)
	callq	*%rax
	movl	%eax, %ecx
	movq	696(%rsp), %rbx
	movq	704(%rsp), %rax
	movl	$0, 692(%rsp)
	testl	%ecx, %ecx
	jne	.LBB2_1
.LBB2_7:
	addq	$712, %rsp
	.cfi_def_cfa_offset 56
	popq	%rbx
	.cfi_def_cfa_offset 48
	popq	%r12
	.cfi_def_cfa_offset 40
	popq	%r13
	.cfi_def_cfa_offset 32
	popq	%r14
	.cfi_def_cfa_offset 24
	popq	%r15
	.cfi_def_cfa_offset 16
	popq	%rbp
	.cfi_def_cfa_offset 8
	retq
.LBB2_1:
	.cfi_def_cfa_offset 768
	movabsq	$numba_gil_ensure, %r14
	leaq	692(%rsp), %rdi
	movq	%rax, %r15
	callq	*%r14
	movabsq	$PyErr_Clear, %rax
	callq	*%rax
	movl	8(%rbx), %esi
	movq	(%rbx), %rdi
	cmpl	$0, 32(%rbx)
	jle	.LBB2_4
	movslq	%esi, %rsi
	movabsq	$PyBytes_FromStringAndSize, %rax
	callq	*%rax
	movq	16(%rbx), %rdi
	movq	%rax, %r14
	callq	*24(%rbx)
	testq	%rax, %rax
	je	.LBB2_3
	movabsq	$numba_runtime_build_excinfo_struct, %rcx
	movq	%r14, %rdi
	movq	%rax, %rsi
	callq	*%rcx
	movabsq	$NRT_Free, %r12
	movq	%rbx, %rdi
	movq	%rax, %r14
	callq	*%r12
	jmp	.LBB2_5
.LBB2_4:
	movq	16(%rbx), %rdx
	movabsq	$numba_unpickle, %rax
	callq	*%rax
	movq	%rax, %r14
.LBB2_5:
	testq	%r14, %r14
	je	.LBB2_6
	movabsq	$numba_do_raise, %rax
	movq	%r14, %rdi
	callq	*%rax
.LBB2_6:
	movabsq	$".const.<numba.core.cpu.CPUContext>", %rdi
	movabsq	$PyUnicode_FromString, %rax
	callq	*%rax
	movabsq	$PyErr_WriteUnraisable, %r14
	movq	%rax, %rbx
	movq	%rbx, %rdi
	callq	*%r14
	movabsq	$Py_DecRef, %rax
	movq	%rbx, %rdi
	callq	*%rax
	movabsq	$numba_gil_release, %rax
	leaq	692(%rsp), %rdi
	callq	*%rax
	movq	%r15, %rax
	jmp	.LBB2_7
.LBB2_3:
	movabsq	$PyExc_RuntimeError, %rdi
	movabsq	$".const.Error creating Python tuple from runtime exception arguments.1", %rsi
	movabsq	$PyErr_SetString, %rax
	callq	*%rax
	xorl	%eax, %eax
	jmp	.LBB2_7
.Lfunc_end2:
	.size	cfunc._ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx, .Lfunc_end2-cfunc._ZN8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx
	.cfi_endproc

	.weak	NRT_incref
	.p2align	4
	.type	NRT_incref,@function
NRT_incref:
	testq	%rdi, %rdi
	je	.LBB3_2
	lock		incq	(%rdi)
.LBB3_2:
	retq
.Lfunc_end3:
	.size	NRT_incref, .Lfunc_end3-NRT_incref

	.weak	NRT_decref
	.p2align	4
	.type	NRT_decref,@function
NRT_decref:
	.cfi_startproc
	testq	%rdi, %rdi
	je	.LBB4_2
	#MEMBARRIER
	lock		decq	(%rdi)
	je	.LBB4_3
.LBB4_2:
	retq
.LBB4_3:
	movabsq	$NRT_MemInfo_call_dtor, %rax
	#MEMBARRIER
	jmpq	*%rax
.Lfunc_end4:
	.size	NRT_decref, .Lfunc_end4-NRT_decref
	.cfi_endproc

	.type	.const.pickledata.ca8efb3a72d614fe872032cce3ac326007a30727,@object
	.section	.lrodata,"al",@progbits
	.p2align	4, 0x0
.const.pickledata.ca8efb3a72d614fe872032cce3ac326007a30727:
	.ascii	"\200\004\225A\000\000\000\000\000\000\000\214\bbuiltins\224\214\nValueError\224\223\224\214\036range() arg 3 must not be zero\224\205\224N\207\224."
	.size	.const.pickledata.ca8efb3a72d614fe872032cce3ac326007a30727, 76

	.type	.const.pickledata.ca8efb3a72d614fe872032cce3ac326007a30727.sha1,@object
	.p2align	4, 0x0
.const.pickledata.ca8efb3a72d614fe872032cce3ac326007a30727.sha1:
	.ascii	"\312\216\373:r\326\024\376\207 2\314\343\2542`\007\243\007'"
	.size	.const.pickledata.ca8efb3a72d614fe872032cce3ac326007a30727.sha1, 20

	.type	.const.picklebuf.ca8efb3a72d614fe872032cce3ac326007a30727,@object
	.p2align	4, 0x0
.const.picklebuf.ca8efb3a72d614fe872032cce3ac326007a30727:
	.quad	.const.pickledata.ca8efb3a72d614fe872032cce3ac326007a30727
	.long	76
	.zero	4
	.quad	.const.pickledata.ca8efb3a72d614fe872032cce3ac326007a30727.sha1
	.quad	0
	.long	0
	.zero	4
	.size	.const.picklebuf.ca8efb3a72d614fe872032cce3ac326007a30727, 40

	.type	.const._v2,@object
.const._v2:
	.asciz	"_v2"
	.size	.const._v2, 4

	.type	_ZN08NumbaEnv8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx,@object
	.comm	_ZN08NumbaEnv8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx,8,8
	.type	".const.missing Environment: _ZN08NumbaEnv8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx",@object
	.p2align	4, 0x0
".const.missing Environment: _ZN08NumbaEnv8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx":
	.asciz	"missing Environment: _ZN08NumbaEnv8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx"
	.size	".const.missing Environment: _ZN08NumbaEnv8__main__3_v2B3v12B86c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQPKkLTj8gEEF9aYtuj_2br1ZPz80qKEpNL1Gs1gcFdBDMWKZ2BRTQBE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedE5ArrayIxLi1E1C7mutable7alignedEx5ArrayIyLi2E1C8readonly7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE5ArrayIdLi1E1C7mutable7alignedE8UniTupleIxLi2EE8UniTupleIxLi3EE8UniTupleIxLi8EEx5ArrayIiLi2E1C7mutable7alignedEx", 505

	.type	".const.can't unbox array from PyObject into native value.  The object maybe of a different type",@object
	.p2align	4, 0x0
".const.can't unbox array from PyObject into native value.  The object maybe of a different type":
	.asciz	"can't unbox array from PyObject into native value.  The object maybe of a different type"
	.size	".const.can't unbox array from PyObject into native value.  The object maybe of a different type", 89

	.type	".const.size mismatch for tuple, expected 2 element(s) but got %zd",@object
	.p2align	4, 0x0
".const.size mismatch for tuple, expected 2 element(s) but got %zd":
	.asciz	"size mismatch for tuple, expected 2 element(s) but got %zd"
	.size	".const.size mismatch for tuple, expected 2 element(s) but got %zd", 59

	.type	".const.size mismatch for tuple, expected 3 element(s) but got %zd",@object
	.p2align	4, 0x0
".const.size mismatch for tuple, expected 3 element(s) but got %zd":
	.asciz	"size mismatch for tuple, expected 3 element(s) but got %zd"
	.size	".const.size mismatch for tuple, expected 3 element(s) but got %zd", 59

	.type	".const.size mismatch for tuple, expected 8 element(s) but got %zd",@object
	.p2align	4, 0x0
".const.size mismatch for tuple, expected 8 element(s) but got %zd":
	.asciz	"size mismatch for tuple, expected 8 element(s) but got %zd"
	.size	".const.size mismatch for tuple, expected 8 element(s) but got %zd", 59

	.type	".const.Error creating Python tuple from runtime exception arguments",@object
	.p2align	4, 0x0
".const.Error creating Python tuple from runtime exception arguments":
	.asciz	"Error creating Python tuple from runtime exception arguments"
	.size	".const.Error creating Python tuple from runtime exception arguments", 61

	.type	".const.Error creating Python tuple from runtime exception arguments.1",@object
	.p2align	4, 0x0
".const.Error creating Python tuple from runtime exception arguments.1":
	.asciz	"Error creating Python tuple from runtime exception arguments"
	.size	".const.Error creating Python tuple from runtime exception arguments.1", 61

	.type	".const.<numba.core.cpu.CPUContext>",@object
	.p2align	4, 0x0
".const.<numba.core.cpu.CPUContext>":
	.asciz	"<numba.core.cpu.CPUContext>"
	.size	".const.<numba.core.cpu.CPUContext>", 28

	.type	_ZN08NumbaEnv9ngramtool4util3jit16_static_overload12_3clocals_3e12_3clambda_3eB3v14B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE8UniTupleIxLi2EE,@object
	.comm	_ZN08NumbaEnv9ngramtool4util3jit16_static_overload12_3clocals_3e12_3clambda_3eB3v14B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE8UniTupleIxLi2EE,8,8
	.type	_ZN08NumbaEnv9ngramtool4util3jit16_static_overload12_3clocals_3e12_3clambda_3eB3v15B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE8UniTupleIxLi3EE,@object
	.comm	_ZN08NumbaEnv9ngramtool4util3jit16_static_overload12_3clocals_3e12_3clambda_3eB3v15B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE8UniTupleIxLi3EE,8,8
	.type	_ZN08NumbaEnv9ngramtool4util3jit16_static_overload12_3clocals_3e12_3clambda_3eB3v16B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE8UniTupleIxLi8EE,@object
	.comm	_ZN08NumbaEnv9ngramtool4util3jit16_static_overload12_3clocals_3e12_3clambda_3eB3v16B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE8UniTupleIxLi8EE,8,8
	.type	_ZN08NumbaEnv5numba2np8arrayobj11ol_np_empty12_3clocals_3e4implB3v17B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE8UniTupleIxLi2EE48omitted_28default_3d_3cclass_20_27float_27_3e_29,@object
	.comm	_ZN08NumbaEnv5numba2np8arrayobj11ol_np_empty12_3clocals_3e4implB3v17B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE8UniTupleIxLi2EE48omitted_28default_3d_3cclass_20_27float_27_3e_29,8,8
	.type	.const.pickledata.331b8563bdb9dac81b38422273052c486fc1706b,@object
	.p2align	4, 0x0
.const.pickledata.331b8563bdb9dac81b38422273052c486fc1706b:
	.ascii	"\200\004\225B\000\000\000\000\000\000\000\214\bbuiltins\224\214\nValueError\224\223\224\214\037negative dimensions not allowed\224\205\224N\207\224."
	.size	.const.pickledata.331b8563bdb9dac81b38422273052c486fc1706b, 77

	.type	.const.pickledata.331b8563bdb9dac81b38422273052c486fc1706b.sha1,@object
	.p2align	4, 0x0
.const.pickledata.331b8563bdb9dac81b38422273052c486fc1706b.sha1:
	.ascii	"3\033\205c\275\271\332\310\0338B\"s\005,Ho\301pk"
	.size	.const.pickledata.331b8563bdb9dac81b38422273052c486fc1706b.sha1, 20

	.type	.const.picklebuf.331b8563bdb9dac81b38422273052c486fc1706b,@object
	.p2align	4, 0x0
.const.picklebuf.331b8563bdb9dac81b38422273052c486fc1706b:
	.quad	.const.pickledata.331b8563bdb9dac81b38422273052c486fc1706b
	.long	77
	.zero	4
	.quad	.const.pickledata.331b8563bdb9dac81b38422273052c486fc1706b.sha1
	.quad	0
	.long	0
	.zero	4
	.size	.const.picklebuf.331b8563bdb9dac81b38422273052c486fc1706b, 40

	.type	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57,@object
	.p2align	4, 0x0
.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57:
	.ascii	"\200\004\225~\000\000\000\000\000\000\000\214\bbuiltins\224\214\nValueError\224\223\224\214[array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.\224\205\224N\207\224."
	.size	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57, 137

	.type	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.sha1,@object
	.p2align	4, 0x0
.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.sha1:
	.ascii	"X\341N\314\265\007\261\340 i\201t\002#\346\205\313\214<W"
	.size	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.sha1, 20

	.type	.const.picklebuf.58e14eccb507b1e0206981740223e685cb8c3c57,@object
	.p2align	4, 0x0
.const.picklebuf.58e14eccb507b1e0206981740223e685cb8c3c57:
	.quad	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57
	.long	137
	.zero	4
	.quad	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.sha1
	.quad	0
	.long	0
	.zero	4
	.size	.const.picklebuf.58e14eccb507b1e0206981740223e685cb8c3c57, 40

	.type	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209,@object
	.p2align	4, 0x0
.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209:
	.ascii	"\200\004\225K\000\000\000\000\000\000\000\214\bbuiltins\224\214\013MemoryError\224\223\224\214'Allocation failed (probably too large).\224\205\224N\207\224."
	.size	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209, 86

	.type	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1,@object
	.p2align	4, 0x0
.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1:
	.ascii	"\272(\235\201\360\\p \363G|\025sH\004\337e\253\342\t"
	.size	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1, 20

	.type	.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209,@object
	.p2align	4, 0x0
.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209:
	.quad	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209
	.long	86
	.zero	4
	.quad	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1
	.quad	0
	.long	0
	.zero	4
	.size	.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209, 40

	.type	_ZN08NumbaEnv5numba2np8arrayobj11ol_np_empty12_3clocals_3e4implB3v18B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE8UniTupleIxLi2EE16class_28int32_29,@object
	.comm	_ZN08NumbaEnv5numba2np8arrayobj11ol_np_empty12_3clocals_3e4implB3v18B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE8UniTupleIxLi2EE16class_28int32_29,8,8
	.type	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.18,@object
	.p2align	4, 0x0
.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.18:
	.ascii	"\200\004\225~\000\000\000\000\000\000\000\214\bbuiltins\224\214\nValueError\224\223\224\214[array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.\224\205\224N\207\224."
	.size	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.18, 137

	.type	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.sha1.19,@object
	.p2align	4, 0x0
.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.sha1.19:
	.ascii	"X\341N\314\265\007\261\340 i\201t\002#\346\205\313\214<W"
	.size	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.sha1.19, 20

	.type	.const.picklebuf.58e14eccb507b1e0206981740223e685cb8c3c57.14,@object
	.p2align	4, 0x0
.const.picklebuf.58e14eccb507b1e0206981740223e685cb8c3c57.14:
	.quad	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.18
	.long	137
	.zero	4
	.quad	.const.pickledata.58e14eccb507b1e0206981740223e685cb8c3c57.sha1.19
	.quad	0
	.long	0
	.zero	4
	.size	.const.picklebuf.58e14eccb507b1e0206981740223e685cb8c3c57.14, 40

	.type	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.16,@object
	.p2align	4, 0x0
.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.16:
	.ascii	"\200\004\225K\000\000\000\000\000\000\000\214\bbuiltins\224\214\013MemoryError\224\223\224\214'Allocation failed (probably too large).\224\205\224N\207\224."
	.size	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.16, 86

	.type	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1.17,@object
	.p2align	4, 0x0
.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1.17:
	.ascii	"\272(\235\201\360\\p \363G|\025sH\004\337e\253\342\t"
	.size	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1.17, 20

	.type	.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209.15,@object
	.p2align	4, 0x0
.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209.15:
	.quad	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.16
	.long	86
	.zero	4
	.quad	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1.17
	.quad	0
	.long	0
	.zero	4
	.size	.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209.15, 40

	.type	_ZN08NumbaEnv5numba2np8arrayobj11ol_np_zeros12_3clocals_3e4implB3v19B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dEx15class_28bool_29,@object
	.comm	_ZN08NumbaEnv5numba2np8arrayobj11ol_np_zeros12_3clocals_3e4implB3v19B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dEx15class_28bool_29,8,8
	.type	_ZN08NumbaEnv5numba2np8arrayobj11ol_np_empty12_3clocals_3e4implB3v20B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dEx15class_28bool_29,@object
	.comm	_ZN08NumbaEnv5numba2np8arrayobj11ol_np_empty12_3clocals_3e4implB3v20B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dEx15class_28bool_29,8,8
	.type	_ZN08NumbaEnv5numba2np8arrayobj15_call_allocatorB2v9B42c8tJTC_2fWQA93W1AaAIYBPIqRBFCjDSZRVAJmaQIAEN29typeref_5b_3cclass_20_27numba4core5types8npytypes14Array_27_3e_5dExj,@object
	.comm	_ZN08NumbaEnv5numba2np8arrayobj15_call_allocatorB2v9B42c8tJTC_2fWQA93W1AaAIYBPIqRBFCjDSZRVAJmaQIAEN29typeref_5b_3cclass_20_27numba4core5types8npytypes14Array_27_3e_5dExj,8,8
	.type	_ZN08NumbaEnv5numba2np8arrayobj18_ol_array_allocate12_3clocals_3e4implB3v10B42c8tJTIeFIjxB2IKSgI4CrvQClcaMQ5hEEUSJJgA_3dEN29typeref_5b_3cclass_20_27numba4core5types8npytypes14Array_27_3e_5dExj,@object
	.comm	_ZN08NumbaEnv5numba2np8arrayobj18_ol_array_allocate12_3clocals_3e4implB3v10B42c8tJTIeFIjxB2IKSgI4CrvQClcaMQ5hEEUSJJgA_3dEN29typeref_5b_3cclass_20_27numba4core5types8npytypes14Array_27_3e_5dExj,8,8
	.type	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.28,@object
	.p2align	4, 0x0
.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.28:
	.ascii	"\200\004\225K\000\000\000\000\000\000\000\214\bbuiltins\224\214\013MemoryError\224\223\224\214'Allocation failed (probably too large).\224\205\224N\207\224."
	.size	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.28, 86

	.type	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1.29,@object
	.p2align	4, 0x0
.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1.29:
	.ascii	"\272(\235\201\360\\p \363G|\025sH\004\337e\253\342\t"
	.size	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1.29, 20

	.type	.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209.24,@object
	.p2align	4, 0x0
.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209.24:
	.quad	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.28
	.long	86
	.zero	4
	.quad	.const.pickledata.ba289d81f05c7020f3477c15734804df65abe209.sha1.29
	.quad	0
	.long	0
	.zero	4
	.size	.const.picklebuf.ba289d81f05c7020f3477c15734804df65abe209.24, 40

	.type	_ZN08NumbaEnv5numba2np8arrayobj18ol_array_zero_fill12_3clocals_3e4implB3v21B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE5ArrayIbLi1E1C7mutable7alignedE,@object
	.comm	_ZN08NumbaEnv5numba2np8arrayobj18ol_array_zero_fill12_3clocals_3e4implB3v21B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE5ArrayIbLi1E1C7mutable7alignedE,8,8
	.type	_ZN08NumbaEnv5numba7cpython8builtins6ol_min12_3clocals_3e4implB3v22B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE15StarArgUniTupleIxLi2EE,@object
	.comm	_ZN08NumbaEnv5numba7cpython8builtins6ol_min12_3clocals_3e4implB3v22B86c8tJTIeFIjxB2IKSgI4CrvQCk0Z4yRYcWsCAgXrKFt1X1erJ_2bXklRYnJJeq1msDAxYh_2bqJnA4AOzNAE_3dE15StarArgUniTupleIxLi2EE,8,8
	.section	".note.GNU-stack","",@progbits
