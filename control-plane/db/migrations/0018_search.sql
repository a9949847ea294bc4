-- The search index: chunks of documents and resource projections, an inverted index of their
-- terms (postings), and the term statistics that BM25 ranks with, kept per tenant so that no
-- tenant's ranking depends on another's text. Row-level security confines every table to the
-- transaction's tenant. Statistics rows are split into 16 shards per tenant (a source always
-- counts into the shard of its id) so that concurrent writes of different sources rarely wait on
-- the same counter row.
--
-- Vectors: `embedding` holds the chunk's vector as real[] with its model and dimension; the
-- pgvector store, when the extension exists, indexes it by an HNSW expression index per model
-- (search/pgvector-store.ts), so that this migration does not depend on the extension.

create table search_chunks (
  id bigint generated always as identity primary key,
  tenant_id uuid not null references tenants (id),
  source_kind text not null check (source_kind in ('document', 'resource')),
  source_id text not null,
  source_type text not null,
  chunk_index integer not null,
  content text not null,
  metadata jsonb not null default '{}',
  -- BM25's document length: the chunk's indexed terms (stop words excluded), counted with repeats.
  term_count integer not null,
  -- null until embedded; with the Qdrant store the vector lives there and only its model and dimension here.
  embedding real[],
  embedding_model text,
  embedding_dimensions integer,
  unique (tenant_id, source_kind, source_id, chunk_index)
);
-- Chunks still to embed, oldest first, for the embedding backlog of every tenant.
create index search_chunks_unembedded on search_chunks (id) where embedding_model is null;

create table search_postings (
  tenant_id uuid not null references tenants (id),
  term text not null,
  chunk_id bigint not null references search_chunks (id) on delete cascade,
  frequency integer not null,
  -- The chunk's term_count, copied so that BM25 is computed from this index alone.
  chunk_terms integer not null,
  primary key (tenant_id, term, chunk_id) include (frequency, chunk_terms)
);
create index search_postings_chunk on search_postings (chunk_id);

create table search_term_stats (
  tenant_id uuid not null references tenants (id),
  term text not null,
  shard smallint not null,
  chunk_frequency integer not null,
  primary key (tenant_id, term, shard)
);

create table search_tenant_stats (
  tenant_id uuid not null references tenants (id),
  shard smallint not null,
  chunk_count bigint not null,
  term_total bigint not null,
  primary key (tenant_id, shard)
);

alter table search_chunks enable row level security;
alter table search_postings enable row level security;
alter table search_term_stats enable row level security;
alter table search_tenant_stats enable row level security;
create policy tenant_rows on search_chunks using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on search_postings using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on search_term_stats using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on search_tenant_stats using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert, update, delete on search_chunks, search_postings, search_term_stats, search_tenant_stats to svc_app;

-- Replaces every chunk of one source of the transaction's tenant with `chunks` (a JSON array of
-- {content, metadata}; empty removes the source) and keeps the postings and statistics in step.
-- Runs as the caller (row-level security applies). Concurrent calls for one source wait on each
-- other (an advisory lock for the transaction); statistics rows are changed in term order, so
-- calls for different sources cannot deadlock on them. Returns the number of chunks stored.
create or replace function search_replace_source(p_kind text, p_source_id text, p_source_type text, p_chunks jsonb)
  returns integer
  language plpgsql
  as $$
declare
  v_tenant uuid := current_tenant_id();
  v_shard smallint := hashtext(p_kind || ':' || p_source_id) & 15;
  v_old_ids bigint[];
  v_old_count integer;
  v_old_terms bigint;
  v_old_term text[];
  v_old_n integer[];
  v_new_ids bigint[];
  v_new_count integer;
  v_new_terms bigint;
begin
  if v_tenant is null then
    raise exception 'search_replace_source needs the transaction''s tenant (svc.tenant_id)';
  end if;
  perform pg_advisory_xact_lock(hashtextextended('search:' || v_tenant || ':' || p_kind || ':' || p_source_id, 0));

  select coalesce(array_agg(id), '{}'), count(*), coalesce(sum(term_count), 0)
    into v_old_ids, v_old_count, v_old_terms
    from search_chunks
   where tenant_id = v_tenant and source_kind = p_kind and source_id = p_source_id;

  if v_old_count > 0 then
    select coalesce(array_agg(term), '{}'), coalesce(array_agg(n), '{}')
      into v_old_term, v_old_n
      from (select term, count(*)::integer as n from search_postings
             where tenant_id = v_tenant and chunk_id = any (v_old_ids) group by term) old;
    delete from search_chunks where id = any (v_old_ids);
  else
    v_old_term := '{}';
    v_old_n := '{}';
  end if;

  with input as (
    select (c.ordinality - 1)::integer as chunk_index, c.value ->> 'content' as content,
           coalesce(c.value -> 'metadata', '{}'::jsonb) as metadata,
           to_tsvector('english', c.value ->> 'content') as terms
      from jsonb_array_elements(coalesce(p_chunks, '[]'::jsonb)) with ordinality as c (value, ordinality)
  ),
  terms as (
    select input.chunk_index, t.lexeme as term, coalesce(cardinality(t.positions), 1) as frequency
      from input, unnest(input.terms) as t
  ),
  inserted as (
    insert into search_chunks (tenant_id, source_kind, source_id, source_type, chunk_index, content, metadata, term_count)
    select v_tenant, p_kind, p_source_id, p_source_type, input.chunk_index, input.content, input.metadata,
           coalesce((select sum(terms.frequency) from terms where terms.chunk_index = input.chunk_index), 0)
      from input
    returning id, chunk_index, term_count
  ),
  posted as (
    insert into search_postings (tenant_id, term, chunk_id, frequency, chunk_terms)
    select v_tenant, terms.term, inserted.id, terms.frequency, inserted.term_count
      from terms join inserted using (chunk_index)
  )
  select coalesce(array_agg(id), '{}'), count(*), coalesce(sum(term_count), 0)
    into v_new_ids, v_new_count, v_new_terms
    from inserted;

  insert into search_term_stats as s (tenant_id, term, shard, chunk_frequency)
  select v_tenant, d.term, v_shard, sum(d.n)
    from (select p.term, count(*)::integer as n from search_postings p
           where p.tenant_id = v_tenant and p.chunk_id = any (v_new_ids) group by p.term
          union all
          select o.term, -o.n from unnest(v_old_term, v_old_n) as o (term, n)) d
   group by d.term
  having sum(d.n) <> 0
   order by d.term
  on conflict (tenant_id, term, shard) do update set chunk_frequency = s.chunk_frequency + excluded.chunk_frequency;

  if v_new_count <> v_old_count or v_new_terms <> v_old_terms then
    insert into search_tenant_stats as s (tenant_id, shard, chunk_count, term_total)
    values (v_tenant, v_shard, v_new_count - v_old_count, v_new_terms - v_old_terms)
    on conflict (tenant_id, shard) do update
      set chunk_count = s.chunk_count + excluded.chunk_count, term_total = s.term_total + excluded.term_total;
  end if;

  return v_new_count;
end $$;

grant execute on function search_replace_source(text, text, text, jsonb) to svc_app;
