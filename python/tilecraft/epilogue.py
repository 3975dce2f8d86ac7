"""Epilogue functors in the seed's spelling (seed 002, "Epilogue Functor").

The functions forward their arguments as given; the C++ binding checks each (TypeError for a
value of the wrong type, ValueError for a bad one, both naming the argument)."""

from tilecraft import _core
from tilecraft._core import Activation, ActivationFunction, DataType


def _activation(kind):
    def make(element_epilogue_compute=DataType.f32):
        return ActivationFunction(kind, element_epilogue_compute)

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


def LinearCombination(element_C, alignment_c, element_acc, element_epilogue_compute, *,
                      bias=None, element_bias=None, aux=False, element_aux=None, scales=False):
    """D = alpha * accumulator + beta * C.

    SM90 fusions (arch=90 operations): ``bias='row'|'column'`` adds a vector of M or N values of
    ``element_bias`` (default element_C); ``aux=True`` also writes Z = alpha * acc + beta * C + bias
    to an aux tensor of ``element_aux``; ``scales=True`` applies fp8 per-tensor scales:
    D = scale_d * (scale_a * scale_b * alpha * acc + scale_c * beta * C + bias).
    """
    return _core.make_linear_combination(element_C, alignment_c, element_acc,
                                         element_epilogue_compute, bias=bias,
                                         element_bias=element_bias, aux=aux,
                                         element_aux=element_aux, scales=scales)


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
    """D = activation(alpha * accumulator + beta * C); ``activation`` is e.g. ``relu(float32)``
    (or ``relu``, which then computes in element_epilogue_compute).

    Takes the SM90 fusions of ``LinearCombination`` (bias, aux, scales); aux holds the value
    before the activation. ``gelu_tanh`` and ``clamp`` (bounds as epilogue_type arguments) are
    SM90 activations.
    """
    if callable(activation) and isinstance(getattr(activation, "activation", None), Activation):
        activation = activation(element_epilogue_compute)  # relu, not relu(float32)
    return _core.make_linear_combination_generic(activation, element_C, alignment_c, element_acc,
                                                 element_epilogue_compute, bias=bias,
                                                 element_bias=element_bias, aux=aux,
                                                 element_aux=element_aux, scales=scales)


from tilecraft.epilogue_trace import fast_math, trace  # noqa: E402  (after the functors)
