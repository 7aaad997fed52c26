"""A shorter Numba compiler pipeline for generated programs (compile time is most of a first call).

Numba's default nopython pipeline prepares for code a person writes: `with` contexts, closures,
inlinable and `literally` calls, literal unrolling, rewrites of array expressions and constant
branches, SSA reconstruction. Generated programs use none of these: every variable keeps one type,
there are no closures, array expressions, `with` blocks or literal calls, and the branches are
data-dependent. Their pipeline is: bytecode -> IR, typing, legalisation, lowering.

    @numba.njit(pipeline_class=GeneratedCompiler)
"""
from __future__ import annotations

from numba.core.compiler import CompilerBase
from numba.core.compiler_machinery import PassManager
from numba.core.typed_passes import (
    AnnotateTypes,
    IRLegalization,
    NativeLowering,
    NoPythonBackend,
    NopythonTypeInference,
    PreLowerStripPhis,
)
from numba.core.untyped_passes import FixupArgs, IRProcessing, RewriteDynamicRaises, TranslateByteCode


class GeneratedCompiler(CompilerBase):
    """Numba's nopython pipeline without the passes generated code does not need (module docstring)."""

    def define_pipelines(self):
        manager = PassManager("adarray generated")
        if self.state.func_ir is None:
            manager.add_pass(TranslateByteCode, "analyzing bytecode")
            manager.add_pass(FixupArgs, "fix up args")
        manager.add_pass(IRProcessing, "processing IR")
        manager.add_pass(RewriteDynamicRaises, "rewrite dynamic raises")
        manager.add_pass(NopythonTypeInference, "nopython frontend")
        manager.add_pass(PreLowerStripPhis, "remove phis nodes")
        manager.add_pass(IRLegalization, "ensure IR is legal prior to lowering")
        manager.add_pass(AnnotateTypes, "annotate types")
        manager.add_pass(NativeLowering, "native lowering")
        manager.add_pass(NoPythonBackend, "nopython mode backend")
        manager.finalize()
        return [manager]
