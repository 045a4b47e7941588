"""The score-over-time plot of a memory page: inline SVG, no script.

The frontmatter keeps the outcomes in order but not when each was recorded, so the x axis is the
outcome's number, and the line is the 95 % lower bound of the success rate after each one (what
ranking reads from the record); each dot is coloured by the outcome itself.
"""

from __future__ import annotations

from html import escape

from vault.scoring import SUCCESS_CREDIT, wilson_lower_bound

COLOURS = {"worked": "#2e7d32", "partial": "#f9a825", "failed": "#c62828"}
WIDTH, HEIGHT, PAD = 360, 140, 24


def score_points(outcomes: list[str]) -> list[tuple[str, float]]:
    """(outcome, Wilson lower bound after it) for each outcome that counts (unknown is skipped)."""
    points, credit, trials = [], 0.0, 0
    for outcome in outcomes:
        if outcome not in SUCCESS_CREDIT:
            continue
        trials += 1
        credit += SUCCESS_CREDIT[outcome]
        points.append((outcome, wilson_lower_bound(credit, trials)))
    return points


def score_svg(outcomes: list[str]) -> str:
    points = score_points(outcomes)
    if not points:
        return '<p class="muted">No outcomes recorded yet.</p>'
    span = max(1, len(points) - 1)

    def x(n: int) -> float:
        return PAD + (WIDTH - 2 * PAD) * (n / span if len(points) > 1 else 0.5)

    def y(value: float) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * value

    line = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, (_, v) in enumerate(points))
    dots = "".join(
        f'<circle cx="{x(n):.1f}" cy="{y(v):.1f}" r="4" fill="{COLOURS[o]}"><title>#{n + 1} {escape(o)}: '
        f'{v:.2f}</title></circle>' for n, (o, v) in enumerate(points))
    axes = (f'<line x1="{PAD}" y1="{y(0)}" x2="{WIDTH - PAD}" y2="{y(0)}" stroke="#999"/>'
            f'<line x1="{PAD}" y1="{y(1)}" x2="{WIDTH - PAD}" y2="{y(1)}" stroke="#ddd"/>'
            f'<text x="2" y="{y(1) + 4}" font-size="10">1</text><text x="2" y="{y(0) + 4}" font-size="10">0</text>'
            f'<text x="{WIDTH - PAD}" y="{HEIGHT - 6}" font-size="10" text-anchor="end">outcome #{len(points)}</text>')
    return (f'<svg class="plot" role="img" aria-label="score after each outcome" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg">{axes}'
            f'<polyline points="{line}" fill="none" stroke="#1565c0" stroke-width="2"/>{dots}</svg>')
