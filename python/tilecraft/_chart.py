"""Bar charts of ratios (a baseline's time over tilecraft's: above 1.0, tilecraft is faster),
drawn with matplotlib, an optional dependency: ``pip install 'tilecraft[plot]'``. Without it,
``bar_chart`` raises ChartsUnavailable, whose message says how to get charts."""

import io
import math
import textwrap

HOW_TO_GET_CHARTS = "pip install 'tilecraft[plot]' (or pip install matplotlib)"


class ChartsUnavailable(RuntimeError):
    """matplotlib cannot be imported, so no chart is drawn."""


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ChartsUnavailable(f"charts need matplotlib, which cannot be imported ({error}): "
                                f"{HOW_TO_GET_CHARTS}") from None
    return Figure


def _color(ratio):
    return "#2ea043" if ratio >= 1.0 else "#e68c1e" if ratio >= 0.9 else "#d23232"


def figure(rows, title, baseline_label="1.0 = baseline"):
    """The matplotlib Figure of ``rows``, (label, ratio) pairs in order, top to bottom: one
    horizontal bar each (green at or above 1.0, orange from 0.9, red below; a ratio that is not
    a finite number has no bar and reads "no result"), its value beside it, and a line at 1.0.
    Drawn without pyplot, so no global state of the caller's matplotlib changes."""
    if not rows:
        raise ValueError("rows: expected at least one (label, ratio) pair, got none")
    Figure = _figure_class()
    labels = [str(label) for label, _ in rows]
    ratios = [float(r) if r is not None else math.nan for _, r in rows]
    finite = [r for r in ratios if math.isfinite(r)]
    right = max([1.25] + [r * 1.15 for r in finite])
    fig = Figure(figsize=(9.0, 1.3 + 0.32 * len(rows)), layout="constrained")
    ax = fig.add_subplot()
    positions = list(range(len(rows)))
    for y, ratio in zip(positions, ratios):
        if math.isfinite(ratio):
            ax.barh(y, max(ratio, 0.0), color=_color(ratio), height=0.7)
            ax.text(max(ratio, 0.0) + right * 0.01, y, f"{ratio:.2f}x", va="center", fontsize=8)
        else:
            ax.text(right * 0.01, y, "no result", va="center", fontsize=8, color="#666666")
    ax.axvline(1.0, color="black", linewidth=1.0)
    ax.set_yticks(positions, labels, fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # the first row on top
    ax.set_xlim(0, right)
    ax.set_xlabel(baseline_label, fontsize=8)
    ax.set_title(textwrap.fill(str(title), 80), fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig


def bar_chart(rows, title, baseline_label="1.0 = baseline", path=None):
    """The PNG bytes of ``figure(rows, title, baseline_label)`` (also written to ``path`` when
    given). Raises ChartsUnavailable without matplotlib, ValueError without rows."""
    fig = figure(rows, title, baseline_label)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    data = buffer.getvalue()
    if path is not None:
        with open(path, "wb") as f:
            f.write(data)
    return data
