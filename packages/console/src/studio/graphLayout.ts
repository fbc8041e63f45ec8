/**
 * The graph picture's geometry: `/assistants/{id}/graph` (nodes and edges, `xray` subgraph nodes named
 * `parent:child`) laid out top to bottom by dagre (layered, the picture people know from LangGraph's own drawings).
 * Pure: the bench times it on a 50-node graph.
 */
import dagre from '@dagrejs/dagre';

export interface GraphJson {
  nodes: Array<{ id: string | number; type?: string; data?: unknown }>;
  edges: Array<{ source: string | number; target: string | number; conditional?: boolean; data?: unknown }>;
}

export interface PlacedNode {
  id: string;
  label: string;
  /** Subgraph path of an xray node (`search:query` → ['search']). */
  parents: string[];
  kind: 'start' | 'end' | 'node';
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PlacedEdge {
  source: string;
  target: string;
  conditional: boolean;
  /** SVG path data. */
  path: string;
}

export interface GraphLayout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

const CHAR_WIDTH = 7.5;
const NODE_HEIGHT = 36;
const MIN_WIDTH = 80;
const MAX_LABEL = 40;

/** A label that fits a node: long names are cut (the full name stays in the node's title and accessible name). */
export function nodeLabel(id: string): string {
  const name = id === '__start__' ? 'start' : id === '__end__' ? 'end' : (id.split(':').pop() ?? id);
  return name.length > MAX_LABEL ? `${name.slice(0, MAX_LABEL - 1)}…` : name;
}

function pathOf(points: Array<{ x: number; y: number }>): string {
  if (points.length === 0) return '';
  const [first, ...rest] = points;
  return `M${first!.x},${first!.y}` + rest.map((point) => ` L${point.x},${point.y}`).join('');
}

export function layoutGraph(graph: GraphJson): GraphLayout {
  const layout = new dagre.graphlib.Graph({ multigraph: true });
  layout.setGraph({ rankdir: 'TB', nodesep: 30, ranksep: 42, marginx: 12, marginy: 12 });
  layout.setDefaultEdgeLabel(() => ({}));
  for (const node of graph.nodes) {
    const id = String(node.id);
    const label = nodeLabel(id);
    layout.setNode(id, { width: Math.max(MIN_WIDTH, label.length * CHAR_WIDTH + 28), height: NODE_HEIGHT });
  }
  graph.edges.forEach((edge, index) => {
    const source = String(edge.source);
    const target = String(edge.target);
    if (!layout.hasNode(source) || !layout.hasNode(target)) return;
    layout.setEdge(source, target, { conditional: Boolean(edge.conditional) }, `e${index}`);
  });
  dagre.layout(layout);
  const nodes: PlacedNode[] = layout.nodes().map((id) => {
    const placed = layout.node(id);
    const segments = id.split(':');
    return {
      id,
      label: nodeLabel(id),
      parents: segments.slice(0, -1),
      kind: id === '__start__' ? 'start' : id === '__end__' ? 'end' : 'node',
      x: placed.x - placed.width / 2,
      y: placed.y - placed.height / 2,
      width: placed.width,
      height: placed.height,
    };
  });
  const edges: PlacedEdge[] = layout.edges().map((key) => {
    const edge = layout.edge(key) as { conditional: boolean; points?: Array<{ x: number; y: number }> };
    return { source: key.v, target: key.w, conditional: edge.conditional, path: pathOf(edge.points ?? []) };
  });
  const size = layout.graph();
  return { nodes, edges, width: size.width ?? 0, height: size.height ?? 0 };
}
