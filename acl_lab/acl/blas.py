"""``acl.blas``: the BLAS single operators (CANN's libacl_cblas).

``gemm_ex`` runs the emulator's GEMM operator (``runtime.kernels``) as a kernel task on the
stream, with the checks of the real function; the other GEMM/GEMV entries of the binding are
stubs that raise ``NotImplementedError`` naming the function.
"""

from __future__ import annotations

from ..runtime import singleop
from ..runtime.objects import HostThread
from ..runtime.session import Session
from ._boundary import acl_api


@acl_api("acl.blas.gemm_ex", "aclblasGemmEx", "iiiiiippiipiippiiik", launch=True)
def gemm_ex(s: Session, th: HostThread, cid: int, trans_a: int, trans_b: int, trans_c: int,
            m: int, n: int, k: int, alpha: int, a: int, lda: int, a_type: int, b: int,
            ldb: int, b_type: int, beta: int, c: int, ldc: int, c_type: int,
            compute_type: int, stream: int) -> None:
    """Queue ``C = alpha * op(A) @ op(B) + beta * C`` on ``stream`` (A, B, C, alpha and beta
    in device memory; ``lda``/``ldb``/``ldc`` must be -1).

    Checks as the real function (hicann/ge ``acl_cblas/single_op/blas/gemm_ops.cpp``): a
    null pointer, m/n/k <= 0, a transpose outside N/T/NZ (transC N/NZ), ld != -1 or a
    compute type other than ACL_COMPUTE_HIGH_PRECISION give 100000.
    Differs from real ACL: the real call runs the compiled "GEMM" single op (atc --singleop
    of the sample's gemm.json, found through acl.op.set_model_dir) and fails with 100024
    without it; acl_lab's operators need no compilation. Fractal layouts (ACL_TRANS_NZ)
    return 200001.
    """
    singleop.gemm_ex(s, th, cid, trans_a, trans_b, trans_c, m, n, k, alpha, a, lda, a_type,
                     b, ldb, b_type, beta, c, ldc, c_type, compute_type, stream)


__all__ = ["gemm_ex"]
