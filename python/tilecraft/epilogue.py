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


def LinearCombination(element_C, alignment_c, element_acc, element_epilogue_compute):
    """D = alpha * accumulator + beta * C."""
    return _core.make_linear_combination(element_C, alignment_c, element_acc,
                                         element_epilogue_compute)


def LinearCombinationClamp(element_C, alignment_c, element_acc, element_epilogue_compute):
    """D = alpha * accumulator + beta * C, clamped to D's range."""
    return _core.make_linear_combination_clamp(element_C, alignment_c, element_acc,
                                               element_epilogue_compute)


def FastLinearCombinationClamp(element_C, alignment_c):
    """int8 D from an int32 accumulator in float32, exact for K <= 256."""
    return _core.make_fast_linear_combination_clamp(element_C, alignment_c)


def LinearCombinationGeneric(activation, element_C, alignment_c, element_acc,
                             element_epilogue_compute):
    """D = activation(alpha * accumulator + beta * C); ``activation`` is e.g. ``relu(float32)``."""
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
            "activation: expected relu, leaky_relu, tanh, sigmoid, silu, hardswish or gelu "
            f"(e.g. relu(cutlass.float32)), got {activation!r}")
    return _core.make_linear_combination_generic(activation, element_C, alignment_c,
                                                 element_acc, element_epilogue_compute)
