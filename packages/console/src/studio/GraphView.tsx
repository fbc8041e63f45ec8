/**
 * The graph picture: an SVG drawn from the layout. Node names come from tenant code and are rendered as SVG text
 * nodes (never markup). Each node shows its run state: running, done, interrupted, failed.
 */
import { memo, useMemo } from 'react';
import { layoutGraph, type GraphJson } from './graphLayout';

export type NodeState = 'running' | 'done' | 'interrupted' | 'error';

function GraphViewImpl({ graph, states, title }: { graph: GraphJson; states: ReadonlyMap<string, NodeState>; title: string }) {
  const layout = useMemo(() => layoutGraph(graph), [graph]);
  return (
    <figure className="graph" tabIndex={0} aria-label={`Picture of ${title}`}>
      <svg
        role="group"
        aria-label={`Graph ${title}`}
        viewBox={`0 0 ${Math.max(layout.width, 1)} ${Math.max(layout.height, 1)}`}
        width={layout.width}
        height={layout.height}
        className="graph-svg"
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" className="graph-arrow" />
          </marker>
        </defs>
        {layout.edges.map((edge, index) => (
          <path
            key={index}
            d={edge.path}
            className={edge.conditional ? 'graph-edge graph-edge-conditional' : 'graph-edge'}
            markerEnd="url(#arrow)"
          />
        ))}
        {layout.nodes.map((node) => {
          const state = states.get(node.id);
          return (
            <g
              key={node.id}
              data-node={node.id}
              data-state={state ?? 'idle'}
              className={`graph-node graph-node-${node.kind}${state ? ` graph-node-${state}` : ''}`}
              transform={`translate(${node.x},${node.y})`}
              role="img"
              aria-label={`${node.id}${state ? `: ${state}` : ''}`}
            >
              <title>{node.id}</title>
              <rect width={node.width} height={node.height} rx={node.kind === 'node' ? 6 : 18} />
              <text x={node.width / 2} y={node.height / 2} dominantBaseline="central" textAnchor="middle">
                {node.label}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption className="hint">
        Solid edges always run; dashed edges are conditional.
        {layout.nodes.some((node) => node.parents.length > 0) ? ' Subgraph nodes are named parent:child.' : ''}
      </figcaption>
    </figure>
  );
}

export const GraphView = memo(GraphViewImpl);
