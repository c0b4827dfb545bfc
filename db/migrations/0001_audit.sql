CREATE TABLE `audit` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`user` text NOT NULL,
	`role` text NOT NULL,
	`source` text,
	`verb` text NOT NULL,
	`path` text NOT NULL,
	`namespace` text,
	`name` text,
	`detail` text,
	`code` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_at` ON `audit` (`at`);