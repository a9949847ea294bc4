-- Pages read by OCR per tenant and UTC day, metered against the plan's `documents.ocr`
-- `maxPagesPerDay`: a page is counted when it is read, and only while the day's count is below
-- the limit, so a refused page costs nothing.
create table document_ocr_pages (
  tenant_id uuid not null references tenants (id),
  day date not null,
  pages integer not null check (pages >= 0),
  primary key (tenant_id, day)
);

create policy tenant_rows on document_ocr_pages using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
select force_tenant_rls('document_ocr_pages');
grant select, insert, update on document_ocr_pages to svc_app;
