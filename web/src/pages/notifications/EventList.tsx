/** A webhook's event filter as a person reads it: an empty one is every event. */
export function EventList({ events }: { events: readonly string[] }) {
  if (events.length === 0) return <span>All events</span>;
  return (
    <ul className="event-chips">
      {events.map((type) => (
        <li key={type}>
          <code>{type}</code>
        </li>
      ))}
    </ul>
  );
}
