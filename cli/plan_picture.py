"""A picture of a job's execution plan: Graphviz's ``dot`` draws the JSON plan of
``get_execution_plan()`` with each operator's name and parallelism and each edge's ship
strategy (as Flink's plan visualizer does).

    render_plan(env.get_execution_plan(), "plan.svg")      # or .png, .pdf
"""
import json
import os
import shutil
import subprocess

DOT_MISSING = ("Drawing the plan needs Graphviz's 'dot' command, which was not found on "
               "PATH. Install Graphviz (e.g. 'apt-get install graphviz' or 'brew install "
               "graphviz').")

_SHAPES = {"Data Source": "invhouse", "Data Sink": "house"}


def plan_dot(plan_json: str) -> str:
    """The plan as a Graphviz graph, in the DOT language."""
    lines = ["digraph plan {", "  rankdir=LR;",
             '  node [shape=box, style="rounded,filled", fillcolor="#f4f6fb", '
             'fontname="Helvetica"];', '  edge [fontname="Helvetica", fontsize=10];']
    for node in json.loads(plan_json)["nodes"]:
        label = f"{node['contents']}\\nParallelism: {node['parallelism']}"
        shape = _SHAPES.get(node["pact"], "box")
        lines.append(f'  n{node["id"]} [label="{_escaped(label)}", shape={shape}];')
        for edge in node.get("predecessors", []):
            lines.append(f'  n{edge["id"]} -> n{node["id"]} '
                         f'[label="{_escaped(edge["ship_strategy"])}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_plan(plan_json: str, path: str) -> str:
    """Draws the plan into ``path``, in the format its extension names (svg, png, pdf...);
    returns ``path``."""
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError(DOT_MISSING)
    fmt = os.path.splitext(path)[1].lstrip(".").lower() or "svg"
    done = subprocess.run([dot, f"-T{fmt}", "-o", path], input=plan_dot(plan_json),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"Graphviz could not draw the plan as {fmt!r}: "
                           f"{done.stderr.strip()}")
    return path


def _escaped(text: str) -> str:
    return text.replace('"', '\\"')
