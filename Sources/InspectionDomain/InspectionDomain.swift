// The inspection domain: events, templates, validation, score (being written).
