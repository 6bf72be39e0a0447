// The dashboard of a running job: polls the REST API (Flink's endpoints) once a second
// and draws the job graph, live numbers, throughput, checkpoints and exceptions.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const POLL_MS = 1000;
const CHART_POINTS = 120;
const NODE_W = 196, NODE_H = 102, GAP_X = 84, GAP_Y = 30;
const throughput = [];
let jobId = null, graphDrawn = false, started = null;

async function call(method, path, body) {
  const options = {method, headers: {}};
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json();
  if (!response.ok) throw new Error((data.errors || [response.statusText]).join("; "));
  return data;
}

function el(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function rate(value) {
  return Number(value || 0).toLocaleString("en", {maximumFractionDigits: 0});
}

function watermark(value) {
  const number = Number(value);
  if (!isFinite(number) || number <= -9.2e18) return "none yet";
  if (number >= 9.2e18) return "end of input";
  return new Date(number).toISOString();
}

function bytes(value) {
  return value < 1024 ? `${value} B` : `${(value / 1024).toFixed(1)} KiB`;
}

// -- the job graph: columns by the longest path from a source ----------------------

function drawGraph(plan) {
  const svg = document.getElementById("graph");
  svg.replaceChildren();
  const depth = {}, byId = {};
  for (const node of plan.nodes) byId[node.id] = node;
  const depthOf = (node) => {
    if (depth[node.id] === undefined) {
      depth[node.id] = 0;
      depth[node.id] = Math.max(0, ...(node.inputs || []).map((i) => depthOf(byId[i.id]) + 1));
    }
    return depth[node.id];
  };
  const columns = [];
  for (const node of plan.nodes) (columns[depthOf(node)] ||= []).push(node);
  const position = {};
  columns.forEach((column, x) => column.forEach((node, y) => {
    position[node.id] = {x: 20 + x * (NODE_W + GAP_X), y: 20 + y * (NODE_H + GAP_Y)};
  }));
  const rows = Math.max(...columns.map((c) => c.length));
  svg.setAttribute("width", 40 + columns.length * (NODE_W + GAP_X) - GAP_X);
  svg.setAttribute("height", 40 + rows * (NODE_H + GAP_Y) - GAP_Y);
  for (const node of plan.nodes) {
    for (const input of node.inputs || []) {
      const from = position[input.id], to = position[node.id];
      const x1 = from.x + NODE_W, y1 = from.y + NODE_H / 2, x2 = to.x, y2 = to.y + NODE_H / 2;
      const edge = el("g", {class: "edge"});
      edge.append(el("path", {d: `M${x1},${y1} C${x1 + GAP_X / 2},${y1} ` +
                                 `${x2 - GAP_X / 2},${y2} ${x2},${y2}`}));
      edge.append(el("text", {x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 6, "text-anchor": "middle"},
                     input.ship_strategy));
      svg.append(edge);
    }
  }
  for (const node of plan.nodes) {
    const {x, y} = position[node.id];
    const group = el("g", {class: "vertex", "data-vertex-id": node.id});
    const name = node.description.length > 27 ? node.description.slice(0, 26) + "…"
                                              : node.description;
    group.append(el("rect", {x, y, width: NODE_W, height: NODE_H, rx: 8}));
    group.append(el("title", {}, node.description));
    group.append(el("text", {x: x + 10, y: y + 18, class: "name"}, name));
    group.append(el("text", {x: x + 10, y: y + 36, class: "parallelism"},
                    `Parallelism: ${node.parallelism}`));
    group.append(el("text", {x: x + 10, y: y + 54, class: "rates"}, "in - /s · out - /s"));
    group.append(el("text", {x: x + 10, y: y + 72, class: "vertex-watermark"}, "watermark -"));
    group.append(el("text", {x: x + 10, y: y + 90, class: "busy"}, "busy -"));
    svg.append(group);
  }
}

async function updateVertices(details) {
  let sourcesOut = 0, sinksIn = 0, jobWatermark = null;
  const wanted = "numRecordsInPerSecond,numRecordsOutPerSecond,currentInputWatermark," +
                 "busyTimeMsPerSecond";
  const hasOutput = new Set(details.plan.nodes.flatMap((n) => (n.inputs || []).map((i) => i.id)));
  await Promise.all(details.vertices.map(async (vertex) => {
    const metrics = {};
    for (const m of await call("GET", `/jobs/${jobId}/vertices/${vertex.id}/metrics?get=${wanted}`)) {
      metrics[m.id] = m.value;
    }
    const group = document.querySelector(`[data-vertex-id="${vertex.id}"]`);
    if (group) {
      group.querySelector(".rates").textContent =
        `in ${rate(metrics.numRecordsInPerSecond)} /s · out ${rate(metrics.numRecordsOutPerSecond)} /s`;
      group.querySelector(".vertex-watermark").textContent =
        `watermark ${watermark(metrics.currentInputWatermark).replace(/^\d+-\d+-\d+T|Z$/g, "")}`;
      // the busiest subtask's share of the time (Flink's busyTimeMsPerSecond, in %)
      const busy = Number(metrics.busyTimeMsPerSecond || 0) / 10;
      const busyText = group.querySelector(".busy");
      busyText.textContent = `busy ${busy.toFixed(0)} %`;
      busyText.classList.toggle("hot", busy >= 80);
    }
    const isSource = !details.plan.nodes.find((n) => n.id === vertex.id).inputs;
    if (isSource) sourcesOut += Number(metrics.numRecordsOutPerSecond || 0);
    if (!hasOutput.has(vertex.id)) sinksIn += Number(metrics.numRecordsInPerSecond || 0);
    jobWatermark = metrics.currentInputWatermark;
  }));
  document.getElementById("records-in").textContent = rate(sourcesOut);
  document.getElementById("records-out").textContent = rate(sinksIn);
  document.getElementById("watermark").textContent = watermark(jobWatermark);
  throughput.push(sourcesOut);
  if (throughput.length > CHART_POINTS) throughput.shift();
  drawThroughput();
}

function drawThroughput() {
  const svg = document.getElementById("throughput");
  const top = Math.max(1, ...throughput) * 1.1;
  const step = 800 / Math.max(1, throughput.length - 1);  // the points seen, full width
  const points = throughput.map((v, i) =>
    `${(i * step).toFixed(1)},${(160 - v / top * 150).toFixed(1)}`);
  svg.replaceChildren(
    el("polyline", {points: points.join(" "), fill: "none", stroke: "#2f6fd6",
                    "stroke-width": 2, "vector-effect": "non-scaling-stroke"}),
    el("text", {x: 6, y: 14, "font-size": 12, fill: "#6b7385"}, `max ${rate(top / 1.1)} /s`));
}

// -- checkpoints and exceptions --------------------------------------------------

function updateCheckpoints(stats) {
  const c = stats.counts;
  document.getElementById("checkpoint-counts").textContent =
    `${c.completed} completed, ${c.failed} failed; the latest ${stats.history.length} below`;
  const body = document.querySelector("#checkpoints tbody");
  body.replaceChildren(...stats.history.map((entry) => {
    const row = document.createElement("tr");
    const cells = [entry.id ?? "-", entry.is_savepoint ? "savepoint" : "checkpoint",
                   entry.status, new Date(entry.latest_ack_timestamp).toLocaleTimeString(),
                   `${entry.end_to_end_duration} ms`, bytes(entry.state_size),
                   entry.external_path || entry.failure_message || ""];
    for (const text of cells) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.append(cell);
    }
    return row;
  }));
}

function updateExceptions(info) {
  const box = document.getElementById("exceptions");
  const entries = info.exceptionHistory.entries;
  if (!entries.length) { box.textContent = "None."; return; }
  box.replaceChildren(...entries.slice(0, 5).map((entry) => {
    const pre = document.createElement("pre");
    pre.textContent = `${new Date(entry.timestamp).toLocaleString()}\n${entry.stacktrace}`;
    return pre;
  }));
}

// -- control ---------------------------------------------------------------------

function say(text) {
  document.getElementById("action-result").textContent = text;
}

async function awaitSavepoint(requestId, what) {
  for (;;) {
    const result = await call("GET", `/jobs/${jobId}/savepoints/${requestId}`);
    if (result.status.id === "COMPLETED") {
      const op = result.operation;
      say(op.location ? `${what}: ${op.location}` : `${what} failed: ${op["failure-cause"]["stack-trace"]}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

function control(id, action) {
  document.getElementById(id).addEventListener("click", async () => {
    try { await action(); } catch (error) { say(`${id} refused: ${error.message}`); }
  });
}

control("savepoint", async () => {
  say("Taking a savepoint…");
  const trigger = await call("POST", `/jobs/${jobId}/savepoints`, {});
  await awaitSavepoint(trigger["request-id"], "Savepoint");
});
control("stop", async () => {
  if (!confirm("Stop the job with a savepoint?")) return;
  say("Stopping with a savepoint…");
  const trigger = await call("POST", `/jobs/${jobId}/stop`, {});
  await awaitSavepoint(trigger["request-id"], "Stopped with savepoint");
});
control("cancel", async () => {
  if (!confirm("Cancel the job?")) return;
  await call("PATCH", `/jobs/${jobId}?mode=cancel`);
  say("Cancelling…");
});

// -- the loop --------------------------------------------------------------------

async function poll() {
  try {
    if (jobId === null) {
      const jobs = (await call("GET", "/jobs")).jobs;
      jobId = new URLSearchParams(location.search).get("job") || (jobs[0] && jobs[0].id);
      const features = (await call("GET", "/config")).features;
      for (const [id, on, key] of [["savepoint", features["web-savepoint"], "web.savepoint.enable"],
                                   ["stop", features["web-savepoint"], "web.savepoint.enable"],
                                   ["cancel", features["web-cancel"], "web.cancel.enable"]]) {
        document.getElementById(id).disabled = !on;
        if (!on) document.getElementById(id).title = `disabled: set '${key}: true' to allow`;
      }
    }
    if (jobId) {
      const details = await call("GET", `/jobs/${jobId}`);
      document.getElementById("job-name").textContent = details.name;
      document.getElementById("job-state").textContent = details.state;
      document.getElementById("job-id").textContent = details.jid;
      document.title = `${details.name} - spark-datastream`;
      started = details["start-time"];
      document.getElementById("uptime").textContent = `${Math.round((details.now - started) / 1000)} s`;
      if (!graphDrawn) { drawGraph(details.plan); graphDrawn = true; }
      await Promise.all([
        updateVertices(details),
        call("GET", `/jobs/${jobId}/checkpoints`).then(updateCheckpoints),
        call("GET", `/jobs/${jobId}/exceptions`).then(updateExceptions)]);
    }
  } catch (error) {
    document.getElementById("job-state").textContent =
      jobId ? "ENDED (the driver no longer serves this job)" : "no job";
  }
  setTimeout(poll, POLL_MS);
}

poll();
