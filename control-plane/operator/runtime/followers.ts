/**
 * Which objects (queue keys) follow which topics (see `FollowedChanges`). An object follows the
 * topics its last reconcile named, and those it named before: a look too many is harmless.
 */
export function createFollowers() {
  const byTopic = new Map<string, Set<string>>();
  return {
    follow: (key: string, topics: string[]): void => {
      for (const topic of topics) byTopic.set(topic, (byTopic.get(topic) ?? new Set()).add(key));
    },
    of: (topic: string): Iterable<string> => byTopic.get(topic) ?? [],
    *all(): Iterable<string> {
      for (const keys of byTopic.values()) yield* keys;
    },
  };
}
