CREATE TABLE `device_models` (
	`uid` text PRIMARY KEY NOT NULL,
	`namespace` text NOT NULL,
	`name` text NOT NULL,
	`protocol` text,
	`source` text NOT NULL,
	`origin` text,
	`object` text NOT NULL,
	`resource_version` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_models_ns_name` ON `device_models` (`namespace`,`name`);--> statement-breakpoint
CREATE TABLE `devices` (
	`uid` text PRIMARY KEY NOT NULL,
	`namespace` text NOT NULL,
	`name` text NOT NULL,
	`protocol` text NOT NULL,
	`model` text,
	`source` text NOT NULL,
	`origin` text,
	`object` text NOT NULL,
	`resource_version` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `devices_ns_name` ON `devices` (`namespace`,`name`);--> statement-breakpoint
CREATE INDEX `devices_protocol` ON `devices` (`protocol`);--> statement-breakpoint
CREATE TABLE `events` (
	`uid` text PRIMARY KEY NOT NULL,
	`namespace` text NOT NULL,
	`name` text NOT NULL,
	`involved_kind` text NOT NULL,
	`involved_namespace` text NOT NULL,
	`involved_name` text NOT NULL,
	`involved_uid` text,
	`reason` text NOT NULL,
	`type` text NOT NULL,
	`object` text NOT NULL,
	`last_timestamp` text NOT NULL,
	`resource_version` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_involved` ON `events` (`involved_namespace`,`involved_name`);--> statement-breakpoint
CREATE INDEX `events_last` ON `events` (`last_timestamp`);--> statement-breakpoint
CREATE TABLE `mappers` (
	`name` text PRIMARY KEY NOT NULL,
	`protocol` text NOT NULL,
	`address` text NOT NULL,
	`version` text,
	`api_version` text,
	`state` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `objects` (
	`kind` text NOT NULL,
	`namespace` text NOT NULL,
	`name` text NOT NULL,
	`uid` text NOT NULL,
	`source` text NOT NULL,
	`origin` text,
	`object` text NOT NULL,
	`resource_version` integer NOT NULL,
	PRIMARY KEY(`kind`, `namespace`, `name`)
);
--> statement-breakpoint
CREATE INDEX `objects_rv` ON `objects` (`resource_version`);--> statement-breakpoint
CREATE TABLE `pod_status` (
	`uid` text PRIMARY KEY NOT NULL,
	`namespace` text NOT NULL,
	`name` text NOT NULL,
	`seq` integer NOT NULL,
	`patch` text NOT NULL,
	`updated_at` text NOT NULL,
	`uploaded_seq` integer
);
--> statement-breakpoint
CREATE TABLE `pods` (
	`uid` text PRIMARY KEY NOT NULL,
	`namespace` text NOT NULL,
	`name` text NOT NULL,
	`node_name` text NOT NULL,
	`source` text NOT NULL,
	`origin` text,
	`object` text NOT NULL,
	`resource_version` integer NOT NULL,
	`deleted_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pods_ns_name` ON `pods` (`namespace`,`name`);--> statement-breakpoint
CREATE INDEX `pods_rv` ON `pods` (`resource_version`);