import type { CustomObject } from '../custom-object.ts';
import type { Kube } from '../kube.ts';

/** Records a Kubernetes Event on an object (reason PascalCase, a short message). */
export type RecordEvent = (object: CustomObject, type: 'Normal' | 'Warning', reason: string, message: string) => Promise<void>;

/** Records Events as `component` in `namespace`; failures to record are logged, never fatal. */
export function eventRecorder(kube: Kube, options: { namespace: string; component: string; identity: string; log(message: string): void }): RecordEvent {
  const { namespace, component, identity } = options;
  return async (object, type, reason, message) => {
    const now = new Date();
    try {
      await kube.core.createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${object.metadata.name}.`, namespace },
          involvedObject: { apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name, uid: object.metadata.uid },
          type,
          reason,
          message,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
          source: { component },
          reportingComponent: component,
          reportingInstance: identity,
        },
      });
    } catch (error) {
      options.log(`could not record event ${reason} on ${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
    }
  };
}
