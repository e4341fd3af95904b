/**
 * The instance's BPMN model, drawn by bpmn-js's NavigatedViewer (pan and
 * zoom, no editing), with what the instance has on each element: badges for
 * tokens (the count when more than one), open waiting points and timers,
 * and a red marker on elements with an open incident.
 */
import NavigatedViewer from 'bpmn-js/lib/NavigatedViewer';
import type Canvas from 'diagram-js/lib/core/Canvas';
import type ElementRegistry from 'diagram-js/lib/core/ElementRegistry';
import type Overlays from 'diagram-js/lib/features/overlays/Overlays';
import type { ElementOverlay } from '../../functions/src/operations/types';
import { h } from './dom';

/** A flow node of the model: a target a token may be moved to. */
export interface ModelElement {
  readonly id: string;
  readonly name: string | null;
  readonly type: string;
}

export interface RenderedDiagram {
  readonly elements: readonly ModelElement[];
  /** Overlays whose activity is not drawn in the model (shown in words, so nothing is hidden). */
  readonly unplaced: readonly ElementOverlay[];
}

/** The marker class of an element with an open incident (app.css paints it red). */
export const INCIDENT_MARKER = 'has-incident';

interface BusinessObject {
  readonly $type: string;
  readonly name?: string;
  $instanceOf(type: string): boolean;
}

function businessObject(element: unknown): BusinessObject | null {
  const bo = (element as { businessObject?: BusinessObject }).businessObject;
  return bo !== undefined && typeof bo.$instanceOf === 'function' ? bo : null;
}

function badge(kind: string, overlay: ElementOverlay, count: number, symbol: string, what: string): HTMLElement {
  return h(
    'span',
    {
      class: `badge badge-${kind}`,
      testid: `badge-${kind}-${overlay.activityId}`,
      'data-activity-id': overlay.activityId,
      title: `${count} ${what}`,
    },
    // The count only when it says more than the badge itself: one token is a dot, two are "2".
    count > 1 ? `${symbol}${count}` : symbol,
  );
}

function badgesOf(overlay: ElementOverlay): HTMLElement | null {
  const parts: HTMLElement[] = [];
  if (overlay.tokens > 0)
    parts.push(badge('tokens', overlay, overlay.tokens, '', overlay.tokens > 1 ? 'tokens' : 'token'));
  if (overlay.waiting > 0) parts.push(badge('waiting', overlay, overlay.waiting, '✉', 'waiting for a message'));
  if (overlay.timers > 0) parts.push(badge('timers', overlay, overlay.timers, '◔', 'timers set'));
  if (overlay.incidents > 0) parts.push(badge('incidents', overlay, overlay.incidents, '!', 'open incidents'));
  return parts.length === 0 ? null : h('div', { class: 'badges', testid: `overlay-${overlay.activityId}` }, ...parts);
}

/** The viewer drawn in each slot: a page draws one diagram ('main'), the migration view two ('source', 'target'). */
const current = new Map<string, NavigatedViewer>();

/**
 * Draws `xml` into `container` and places the overlays; throws (bpmn-js's import error) when the XML cannot be drawn.
 * A diagram drawn in the same `slot` before (the page left behind, the target version chosen before) is let go.
 */
export async function renderDiagram(
  container: HTMLElement,
  xml: string,
  overlays: readonly ElementOverlay[],
  slot = 'main',
): Promise<RenderedDiagram> {
  // One diagram per slot: the one of the page left behind lets go of its listeners.
  current.get(slot)?.destroy();
  const viewer = new NavigatedViewer({ container });
  current.set(slot, viewer);
  await viewer.importXML(xml);
  const canvas = viewer.get<Canvas>('canvas');
  const registry = viewer.get<ElementRegistry>('elementRegistry');
  const overlayService = viewer.get<Overlays>('overlays');
  canvas.zoom('fit-viewport');

  const unplaced: ElementOverlay[] = [];
  for (const overlay of overlays) {
    if (registry.get(overlay.activityId) === undefined) {
      unplaced.push(overlay);
      continue;
    }
    if (overlay.incidents > 0) canvas.addMarker(overlay.activityId, INCIDENT_MARKER);
    if (overlay.tokens > 0) canvas.addMarker(overlay.activityId, 'has-token');
    const html = badgesOf(overlay);
    if (html !== null)
      overlayService.add(overlay.activityId, 'instance-state', { position: { top: -12, right: 12 }, html });
  }

  const elements = registry
    .filter((e) => businessObject(e)?.$instanceOf('bpmn:FlowNode') === true)
    .map((e) => {
      const bo = businessObject(e);
      return { id: e.id, name: bo?.name ?? null, type: (bo?.$type ?? '').replace(/^bpmn:/, '') };
    })
    .sort((a, b) => a.id.localeCompare(b.id));
  return { elements, unplaced };
}
