-- The API renders timestamps to the millisecond; rows store them at that precision so that a filter
-- on a value a client was shown matches the row it came from.
alter table resources
  alter column created_at set default date_trunc('milliseconds', now()),
  alter column updated_at set default date_trunc('milliseconds', now());
