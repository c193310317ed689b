-- The SQLite index schema as operator-registry's migrations 000..014 leave it
-- (pkg/sqlite/migrations/, opm v1.73.0 and earlier). Tables are written in
-- their final shape instead of being migrated step by step; column order,
-- types, keys, foreign keys and indexes are the ones the migrations produce,
-- so opm's `registry serve`, `render` and OLM read the file as their own.
-- schema_migrations records the newest migration (14, package.add_mode), so
-- opm runs no migration on it.
CREATE TABLE operatorbundle (
			name TEXT PRIMARY KEY,
			csv TEXT,
			bundle TEXT,
			bundlepath TEXT, skiprange TEXT, version TEXT, replaces TEXT, skips TEXT, substitutesfor TEXT);
CREATE TABLE package (
			name TEXT PRIMARY KEY,
			default_channel TEXT, add_mode TEXT,
			FOREIGN KEY(name, default_channel) REFERENCES channel(package_name,name) ON DELETE CASCADE
		);
CREATE TABLE channel (
			name TEXT,
			package_name TEXT,
			head_operatorbundle_name TEXT,
			PRIMARY KEY(name, package_name),
			FOREIGN KEY(head_operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE
		);
CREATE TABLE channel_entry (
			entry_id INTEGER PRIMARY KEY,
			channel_name TEXT,
			package_name TEXT,
			operatorbundle_name TEXT,
			replaces INTEGER,
			depth INTEGER,
			FOREIGN KEY(replaces) REFERENCES channel_entry(entry_id) DEFERRABLE INITIALLY DEFERRED,
			FOREIGN KEY(channel_name, package_name) REFERENCES channel(name, package_name) ON DELETE CASCADE
		);
CREATE TABLE api (
			group_name TEXT,
			version TEXT,
			kind TEXT,
			plural TEXT NOT NULL,
			PRIMARY KEY(group_name, version, kind)
		);
CREATE TABLE related_image (
			image TEXT,
     		operatorbundle_name TEXT,
     		FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE
		);
CREATE UNIQUE INDEX pk ON operatorbundle(name, version, bundlepath);
CREATE TABLE api_provider (
			group_name TEXT,
			version TEXT,
			kind TEXT,
			operatorbundle_name TEXT,
			operatorbundle_version TEXT,
			operatorbundle_path TEXT,
			FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE
		);
CREATE TABLE api_requirer (
			group_name TEXT,
			version TEXT,
			kind TEXT,
			operatorbundle_name TEXT,
			operatorbundle_version TEXT,
			operatorbundle_path TEXT,
			FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE
		);
CREATE TABLE dependencies (
			type TEXT,
			value TEXT,
			operatorbundle_name TEXT,
			operatorbundle_version TEXT,
			operatorbundle_path TEXT,
			FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE
		);
CREATE TABLE properties (
			type TEXT,
			value TEXT,
			operatorbundle_name TEXT,
			operatorbundle_version TEXT,
			operatorbundle_path TEXT,
			FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE
		);
CREATE TABLE deprecated (
			operatorbundle_name TEXT PRIMARY KEY
		);
CREATE TABLE schema_migrations (
		version bigint NOT NULL,
        timestamp DATETIME DEFAULT CURRENT_TIMESTAMP
	);
INSERT INTO schema_migrations(version) VALUES (14);
