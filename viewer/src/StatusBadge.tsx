/** A session's or input's status as a small coloured label. */
export function StatusBadge({ status, testId }: { status: string; testId?: string }) {
  return (
    <span className={`badge badge-${status}`} data-testid={testId} data-status={status}>
      {status.replaceAll('_', ' ')}
    </span>
  );
}
