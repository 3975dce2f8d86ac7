"""Epilogue functors in the seed's spelling (seed 002, "Epilogue Functor")."""

from tilecraft import _core
from tilecraft._core import Activation, DataType


class _ActivationSpec:
    """``relu(element_epilogue_compute)``: an activation and the type it computes in."""

    def __init__(self, activation, element=DataType.f32):
        self.activation = activation
        self.element = element

    def __repr__(self):
        return f"{self.activation.name}({self.element.name})"


def _activation(kind):
    def make(element_epilogue_compute=DataType.f32):
        return _ActivationSpec(kind, element_epilogue_compute)

    make.__name__ = kind.name
    make.__doc__ = f"The {kind.name} activation for LinearCombinationGeneric."
    make.activation = kind
    return make


relu = _activation(Activation.relu)
leaky_relu = _activation(Activation.leaky_relu)
tanh = _activation(Activation.tanh)
sigmoid = _activation(Activation.sigmoid)
silu = _activation(Activation.silu)
hardswish = _activation(Activation.hardswish)
gelu = _activation(Activation.gelu)
gelu_tanh = _activation(Activation.gelu_tanh)
clamp = _activation(Activation.clamp)

_BIAS = {None: _core.BiasKind.none, "row": _core.BiasKind.per_row,
         "column": _core.BiasKind.per_column}


def _fused(functor, element_C, bias, element_bias, aux, element_aux, scales):
    """Adds the SM90 fusions (bias, aux output, per-tensor scales) when any is asked for."""
    if isinstance(bias, _core.BiasKind):
        kind = bias
    elif bias in _BIAS:
        kind = _BIAS[bias]
    else:
        raise ValueError(f"bias: expected None, 'row' (one value per row of D, M values) or "
                         f"'column' (N values), got {bias!r}")
    if kind == _core.BiasKind.none and not aux and not scales:
        if element_bias is not None or element_aux is not None:
            raise ValueError("element_bias/element_aux: given without bias=/aux=True")
        return functor
    return _core.with_fusion(functor, kind,
                             element_C if element_bias is None else element_bias, bool(aux),
                             element_C if element_aux is None else element_aux, bool(scales))


def LinearCombination(element_C, alignment_c, element_acc, element_epilogue_compute, *,
                      bias=None, element_bias=None, aux=False, element_aux=None, scales=False):
    """D = alpha * accumulator + beta * C.

    SM90 fusions (arch=90 operations): ``bias='row'|'column'`` adds a vector of M or N values of
    ``element_bias`` (default element_C); ``aux=True`` also writes Z = alpha * acc + beta * C + bias
    to an aux tensor of ``element_aux``; ``scales=True`` applies fp8 per-tensor scales:
    D = scale_d * (scale_a * scale_b * alpha * acc + scale_c * beta * C + bias).
    """
    functor = _core.make_linear_combination(element_C, alignment_c, element_acc,
                                            element_epilogue_compute)
    return _fused(functor, element_C, bias, element_bias, aux, element_aux, scales)


def LinearCombinationClamp(element_C, alignment_c, element_acc, element_epilogue_compute):
    """D = alpha * accumulator + beta * C, clamped to D's range."""
    return _core.make_linear_combination_clamp(element_C, alignment_c, element_acc,
                                               element_epilogue_compute)


def FastLinearCombinationClamp(element_C, alignment_c):
    """int8 D from an int32 accumulator in float32, exact for K <= 256."""
    return _core.make_fast_linear_combination_clamp(element_C, alignment_c)


def LinearCombinationGeneric(activation, element_C, alignment_c, element_acc,
                             element_epilogue_compute, *, bias=None, element_bias=None, aux=False,
                             element_aux=None, scales=False):
    """D = activation(alpha * accumulator + beta * C); ``activation`` is e.g. ``relu(float32)``.

    Takes the SM90 fusions of ``LinearCombination`` (bias, aux, scales); aux holds the value
    before the activation. ``gelu_tanh`` and ``clamp`` (bounds as epilogue_type arguments) are
    SM90 activations.
    """
    if callable(activation) and hasattr(activation, "activation"):
        activation = activation(element_epilogue_compute)
    if isinstance(activation, _ActivationSpec):
        if activation.element != element_epilogue_compute:
            raise ValueError(
                f"activation: computes in {activation.element.name} but element_epilogue_compute "
                f"is {element_epilogue_compute.name}; they must agree")
        activation = activation.activation
    if not isinstance(activation, Activation):
        raise TypeError(
            "activation: expected relu, leaky_relu, tanh, sigmoid, silu, hardswish, gelu, "
            f"gelu_tanh or clamp (e.g. relu(cutlass.float32)), got {activation!r}")
    functor = _core.make_linear_combination_generic(activation, element_C, alignment_c,
                                                    element_acc, element_epilogue_compute)
    return _fused(functor, element_C, bias, element_bias, aux, element_aux, scales)
