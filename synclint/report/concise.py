from __future__ import annotations


def line(v) -> str:
    hot = f" ({v.hot_path})" if v.hot_path else ""
    return f"{v.filename}:{v.location.row}:{v.location.column}: {v.code} [{v.confidence.label}] {v.message}{hot}"


def render(violations, sources=None, explain=False) -> str:
    out = []
    for v in violations:
        out.append(line(v))
        if explain:
            out.extend(f"    because {p}" for p in v.provenance)
            if v.tier_reason:
                out.append(f"    tier: {v.tier} ({v.tier_reason})")
    return "\n".join(out) + ("\n" if out else "")
