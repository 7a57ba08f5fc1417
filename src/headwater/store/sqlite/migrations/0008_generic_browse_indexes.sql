-- The browse lists of one element type or one tag key come in id order: without these, a key with
-- hundreds of thousands of values (a timestamp tag) is sorted whole for every page.
CREATE INDEX generic_elements_by_type ON generic_elements (type, id);
CREATE INDEX generic_tags_by_key ON generic_tags (key, id);
