"""Convolution geometry as users write it (an int, or one value per dimension, or padding per
side), normalized to tuples; anything else is passed on for the core to refuse by name."""

from tilecraft import _core


def as_pair(name, value):
    """An int (both dimensions) or two ints, as a tuple of two."""
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected an int or two ints, got {_core.given(value)}")
    if isinstance(value, int):
        return (value, value)
    return tuple(value) if isinstance(value, (list, tuple)) else value


def as_padding(value):
    """An int, (rows, columns) or (top, bottom, left, right), as four ints."""
    if isinstance(value, bool):
        raise TypeError(f"padding: expected an int, two or four ints, got {_core.given(value)}")
    if isinstance(value, int):
        return (value,) * 4
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return (value[0], value[0], value[1], value[1])
    return tuple(value) if isinstance(value, (list, tuple)) else value


def as_triple(name, value):
    """An int (every dimension) or (depth, rows, columns), as a tuple of three."""
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected an int or three ints, got {_core.given(value)}")
    if isinstance(value, int):
        return (value,) * 3
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise TypeError(f"{name}: expected an int or three ints (depth, rows, columns), got "
                        f"{_core.given(value)}")
    return tuple(value)


def as_padding_3d(value):
    """An int, (depth, rows, columns) or (front, back, top, bottom, left, right), as six."""
    if isinstance(value, bool):
        raise TypeError(f"padding: expected an int, three or six ints, got {_core.given(value)}")
    if isinstance(value, int):
        return (value,) * 6
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return (value[0], value[0], value[1], value[1], value[2], value[2])
    if isinstance(value, (list, tuple)) and len(value) == 6:
        return tuple(value)
    raise TypeError(f"padding: expected an int, three ints (depth, rows, columns) or six (front, "
                    f"back, top, bottom, left, right), got {_core.given(value)}")
